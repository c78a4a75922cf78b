package main

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// target is a figure with a goal: the median of metric over the runs of
// bench must not be above most. A benchmark with a target is printed
// whole, its medians beside their targets, whether or not it pairs.
type target struct {
	bench, metric string
	most          float64
	what          string // what the benchmark measures, for the heading
}

// targets are the goals `make bench` reports on; a missed one is printed
// as such (it is a finding, not a failure of the tool).
var targets = []target{
	{bench: "BenchmarkStartupConcurrency/50x100ms", metric: "ratio", most: 0.3,
		what: "50 servers with a 100 ms initialize all ready, StartupConcurrency 8 against 1 (G5)"},
}

// printTargets prints, in input order, each benchmark that has a target,
// and reports whether it printed any.
func printTargets(out io.Writer, s samples, order []string) bool {
	found := false
	for _, name := range order {
		goals := map[string]target{}
		for _, t := range targets {
			if t.bench == name {
				goals[t.metric] = t
			}
		}
		if len(goals) == 0 {
			continue
		}
		found = true
		for _, t := range targets {
			if t.bench == name {
				fmt.Fprintf(out, "\n%s (median of runs): %s\n", name, t.what)
				break
			}
		}
		fmt.Fprintf(out, "  %-12s %14s %8s\n", "metric", "median", "target")
		units := make([]string, 0, len(s[name]))
		for u := range s[name] {
			units = append(units, u)
		}
		slices.Sort(units)
		for _, u := range units {
			m := median(s[name][u])
			t, ok := goals[u]
			if !ok {
				fmt.Fprintf(out, "  %-12s %14s\n", u, figure(m))
				continue
			}
			verdict := "met"
			if m > t.most {
				verdict = "MISSED"
			}
			fmt.Fprintf(out, "  %-12s %14s %8s %7s\n", u, figure(m), atMost(t.most), verdict)
		}
		for _, t := range targets {
			if _, ok := s[name][t.metric]; t.bench == name && !ok {
				fmt.Fprintf(out, "  %-12s %14s %8s %7s\n", t.metric, "-", atMost(t.most), "MISSING")
			}
		}
	}
	return found
}

// atMost is a target's column: "≤ 0.300", padded to 8 characters (the
// sign is one character but three bytes, which %8s would count).
func atMost(v float64) string {
	t := "≤ " + figure(v)
	return strings.Repeat(" ", max(0, 8-utf8.RuneCountInString(t))) + t
}

// figure prints a median: whole numbers for large ones, three decimals
// for the small ones (ratios).
func figure(v float64) string {
	if v >= 100 || v <= -100 {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'f', 3, 64)
}
