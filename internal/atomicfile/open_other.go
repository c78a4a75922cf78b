//go:build !unix

package atomicfile

// openNonblock: no named pipes to block on in the file system here.
const openNonblock = 0
