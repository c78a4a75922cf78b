//go:build !linux

package mcpconn

import "time"

// ExitStatus is known only on Linux (a pidfd looks without reaping); ""
// elsewhere.
func (c *Conn) ExitStatus(time.Duration) string { return "" }
