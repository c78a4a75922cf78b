package mcpconn

import (
	"fmt"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// ExitStatus returns how the stdio server's process ended, as Go's
// os.ProcessState says it ("exit status 1", "signal: killed"), waiting up
// to limit for it to end; "" for a remote server, a process still running
// after limit, or one already reaped. It only looks (WNOWAIT): reaping is
// the SDK's.
func (c *Conn) ExitStatus(limit time.Duration) string {
	pid := c.PID()
	if pid <= 0 {
		return ""
	}
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return ""
	}
	defer unix.Close(fd)
	// A pidfd is readable once its process has exited.
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	if n, err := unix.Poll(fds, int(limit.Milliseconds())); err != nil || n == 0 {
		return ""
	}
	var info unix.Siginfo
	if err := unix.Waitid(unix.P_PIDFD, fd, &info, unix.WEXITED|unix.WNOWAIT|unix.WNOHANG, nil); err != nil {
		return ""
	}
	code, status := siginfoStatus(&info)
	switch code {
	case cldExited:
		return fmt.Sprintf("exit status %d", status)
	case cldKilled, cldDumped:
		return "signal: " + syscall.Signal(status).String()
	}
	return ""
}

// si_code values of SIGCHLD (<asm-generic/siginfo.h>).
const (
	cldExited = 1
	cldKilled = 2
	cldDumped = 3
)

// siginfoStatus reads si_code and si_status of a SIGCHLD siginfo, which
// x/sys keeps in unexported fields: the union after si_signo, si_errno and
// si_code starts at pointer alignment and holds si_pid, si_uid, si_status.
func siginfoStatus(info *unix.Siginfo) (code int32, status int32) {
	union := uintptr(12)
	if unsafe.Sizeof(uintptr(0)) == 8 {
		union = 16
	}
	return info.Code, *(*int32)(unsafe.Add(unsafe.Pointer(info), union+8))
}
