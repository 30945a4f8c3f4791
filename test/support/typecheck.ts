/**
 * `tsc --strict` over a source that is never written to disk, served to the compiler as if it
 * were `file` (so its relative imports of src/ resolve).
 */
import ts from 'typescript'

/**
 * The diagnostics of `source`, as `<line>: TS<code>: <message>`.
 * @example
 * typeDiagnostics(join(REPO_ROOT, 'test', 'x', '__check.ts'), "import { json } from '../../src/index.js'")
 */
export function typeDiagnostics(
  file: string,
  source: string,
  extra: ts.CompilerOptions = {},
): string[] {
  const options: ts.CompilerOptions = {
    strict: true,
    noEmit: true,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    skipLibCheck: true,
    types: ['node'],
    ...extra,
  }
  const host = ts.createCompilerHost(options)
  const read = host.readFile.bind(host)
  const getSourceFile = host.getSourceFile.bind(host)
  host.fileExists = (name) => name === file || ts.sys.fileExists(name)
  host.readFile = (name) => (name === file ? source : read(name))
  host.getSourceFile = (name, version, ...rest) =>
    name === file
      ? ts.createSourceFile(name, source, version)
      : getSourceFile(name, version, ...rest)
  const program = ts.createProgram([file], options, host)
  return ts.getPreEmitDiagnostics(program, program.getSourceFile(file)).map((d) => {
    const line = d.file!.getLineAndCharacterOfPosition(d.start!).line + 1
    return `${line}: TS${d.code}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`
  })
}
