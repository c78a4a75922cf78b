package main

import (
	"fmt"
	"io"
	"slices"
)

// target is a figure that a benchmark reports with b.ReportMetric, and the
// bound the project set for it.
type target struct {
	bench, unit string
	atMost      bool // the figure must be at most bound (else at least)
	bound       float64
}

// targets are the figures printed against their bounds. Every metric of a
// benchmark named here is printed; those listed get the bound and whether
// the median meets it.
func targets() []target {
	return []target{
		// Tool search (peers/toolsearch_bench_test.go): the deferred
		// mode's share of the full tool list's tokens, the query set's hit
		// rates, and one search over 1000 tools.
		{"BenchmarkToolSearchFleet", "deferred-%", true, 15},
		{"BenchmarkToolSearchFleet", "top1-%", false, 90},
		{"BenchmarkToolSearchFleet", "top5-%", false, 90},
		{"BenchmarkToolSearch1000", "p50-us", true, 1000},
	}
}

// printTargets prints, for each benchmark of s that has a target, every
// metric's median with its bound and verdict. It reports whether it
// printed anything.
func printTargets(out io.Writer, s samples, order []string) bool {
	printed := false
	for _, name := range order {
		var mine []target
		for _, t := range targets() {
			if t.bench == name {
				mine = append(mine, t)
			}
		}
		if len(mine) == 0 {
			continue
		}
		printed = true
		fmt.Fprintf(out, "\n%s (median of runs)\n", name)
		fmt.Fprintf(out, "  %-22s %14s %10s %8s\n", "metric", "value", "target", "verdict")
		units := make([]string, 0, len(s[name]))
		for u := range s[name] {
			units = append(units, u)
		}
		slices.Sort(units)
		for _, u := range units {
			v := median(s[name][u])
			bound, verdict := "-", "-"
			if i := slices.IndexFunc(mine, func(t target) bool { return t.unit == u }); i >= 0 {
				t := mine[i]
				met := v >= t.bound
				bound = fmt.Sprintf(">=%g", t.bound)
				if t.atMost {
					met, bound = v <= t.bound, fmt.Sprintf("<=%g", t.bound)
				}
				verdict = "met"
				if !met {
					verdict = "MISSED"
				}
			}
			fmt.Fprintf(out, "  %-22s %14.2f %10s %8s\n", u, v, bound, verdict)
		}
	}
	return printed
}
