/**
 * Regression: UploadedFile and UPLOAD_ERR_OK (spec rule 6: getError() equals the upload-OK
 * constant on success) were not exported from 'fw' or 'fw/runtime'. Checked through the package
 * names (the built entries) and the source entries they are built from.
 */
import { describe, expect, it } from 'vitest'
import * as sourceRoot from '../../../src/index.js'
import * as sourceRuntime from '../../../src/runtime/index.js'
import {
  UPLOAD_ERR_OK,
  UploadedFile,
  type FileMap,
  type UploadedFileInit,
} from '../../../src/index.js'
import * as request from '../../../src/runtime/request/uploaded-file.js'

const NAMES = [
  'UploadedFile',
  'UPLOAD_ERR_OK',
  'UPLOAD_ERR_INI_SIZE',
  'UPLOAD_ERR_FORM_SIZE',
  'UPLOAD_ERR_PARTIAL',
  'UPLOAD_ERR_NO_FILE',
  'UPLOAD_ERR_NO_TMP_DIR',
  'UPLOAD_ERR_CANT_WRITE',
] as const

describe('uploaded-file exports', () => {
  it.each([
    ['fw', () => import('fw')],
    ['fw/runtime', () => import('fw/runtime')],
  ])(
    'the package entry %s exports UploadedFile and the UPLOAD_ERR_* constants',
    async (_name, load) => {
      const entry = (await load()) as Record<string, unknown>
      for (const name of NAMES) expect(entry[name], name).toBeDefined()
      expect(entry.UPLOAD_ERR_OK).toBe(0)
      const File = entry.UploadedFile as typeof UploadedFile
      expect(new File({ path: '/tmp/x', size: 1 }).getError()).toBe(entry.UPLOAD_ERR_OK)
    },
  )

  it('the source entries export the same values, usable as types too', () => {
    for (const entry of [sourceRoot, sourceRuntime] as Record<string, unknown>[]) {
      for (const name of NAMES)
        expect(entry[name], name).toBe((request as Record<string, unknown>)[name])
    }
    const init: UploadedFileInit = { path: '/tmp/x', size: 1 }
    const files: FileMap = { avatar: new UploadedFile(init) }
    expect((files.avatar as UploadedFile).getError()).toBe(UPLOAD_ERR_OK)
  })
})
