//go:build unix

package atomicfile

import "syscall"

// openNonblock keeps an open of a named pipe from waiting for a writer;
// it changes nothing for a regular file.
const openNonblock = syscall.O_NONBLOCK
