/**
 * File-system failures a user can mend (a file where a folder should be, no permission, a
 * read-only or full disk), in words: the CLI says them as such, not as a bug in fw.
 */
const WRITE_FAILURES: Readonly<Record<string, string>> = {
  EEXIST: 'a file is in the way of the folder',
  ENOTDIR: 'a file is in the way of the folder',
  EISDIR: 'a folder is in the way of a file',
  EACCES: 'permission denied',
  EPERM: 'permission denied',
  EROFS: 'the file system is read-only',
  ENOSPC: 'the disk is full',
  EDQUOT: 'the disk quota is used up',
  ENAMETOOLONG: 'a name in the path is longer than the file system allows',
  ELOOP: 'symbolic links in the path lead in a loop',
}

/**
 * What went wrong, when `error` is a write failure the user can mend; else undefined (fw's to fix).
 * @example
 * writeFailure(error) // 'the disk is full' for ENOSPC
 */
export function writeFailure(error: unknown): string | undefined {
  const code = (error as NodeJS.ErrnoException | null)?.code
  return code === undefined ? undefined : WRITE_FAILURES[code]
}
