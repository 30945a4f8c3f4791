/** The request object and its uploaded files. */
export { FwRequest } from './request.js'
export type { CreateRequestInit } from './factory.js'
export type { FileMap } from './multipart.js'
export { compileTrust, type TrustFunction } from './options.js'
export type { Params } from './params.js'
export {
  UploadedFile,
  UPLOAD_ERR_OK,
  UPLOAD_ERR_INI_SIZE,
  UPLOAD_ERR_FORM_SIZE,
  UPLOAD_ERR_PARTIAL,
  UPLOAD_ERR_NO_FILE,
  UPLOAD_ERR_NO_TMP_DIR,
  UPLOAD_ERR_CANT_WRITE,
  type UploadedFileInit,
} from './uploaded-file.js'
