//go:build !linux

package procs

import (
	"errors"
	"time"
)

// Without /proc there is no portable way to find the processes that carry
// a mark: only the process group is killed (internal/mcpconn).
func (t *Tracker) killMarked(func(string) bool, time.Time) []int { return nil }

func (t *Tracker) adoptGroup(int, time.Time) []int { return nil }

func (t *Tracker) reapUntil([]int, time.Time) bool { return true }

// Stat needs /proc: it returns zeros.
func Stat(int) (state byte, ppid, pgrp int) { return 0, 0, 0 }

// EnvOf needs /proc: it returns "".
func EnvOf(int, string) string { return "" }

func becomeSubreaper() error {
	return errors.New("a child subreaper needs Linux")
}

// exitedOnly cannot tell zombies apart without /proc: a process that
// answers a signal counts as live.
func exitedOnly(int) bool { return false }
