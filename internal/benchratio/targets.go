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
// bench must not be above most (or, with atLeast, not below it). A
// benchmark with a target is printed whole, its medians beside their
// targets, whether or not it pairs.
type target struct {
	bench, metric string
	most          float64
	atLeast       bool   // the bound is a floor, not a ceiling
	what          string // what the benchmark measures, for the heading
}

// targets are the goals `make bench` reports on; a missed one is printed
// as such (it is a finding, not a failure of the tool). The first target
// of a benchmark carries its heading.
func targets() []target {
	return []target{
		{bench: "BenchmarkStartupConcurrency/50x100ms", metric: "ratio", most: 0.3,
			what: "50 servers with a 100 ms initialize all ready, StartupConcurrency 8 against 1 (G5)"},
		// Tool search (peers/toolsearch_bench_test.go): the deferred
		// mode's share of the full list's tokens and the query set's top-5
		// hit rate (top-1 is printed, with no target), then one search
		// over 1000 tools.
		{bench: "BenchmarkToolSearchFleet", metric: "deferred-%", most: 15,
			what: "the npm fleet: tokens the model gets, full list against deferred mode, and the query set's hit rates (G2)"},
		{bench: "BenchmarkToolSearchFleet", metric: "top5-%", most: 90, atLeast: true},
		{bench: "BenchmarkToolSearch1000", metric: "p50-us", most: 1000,
			what: "one search over 1000 tools, microseconds (G2)"},
	}
}

// printTargets prints, in input order, each benchmark that has a target,
// and reports whether it printed any.
func printTargets(out io.Writer, s samples, order []string) bool {
	found := false
	for _, name := range order {
		goals := map[string]target{}
		heading := ""
		for _, t := range targets() {
			if t.bench == name {
				goals[t.metric] = t
				if heading == "" {
					heading = t.what
				}
			}
		}
		if len(goals) == 0 {
			continue
		}
		found = true
		fmt.Fprintf(out, "\n%s (median of runs): %s\n", name, heading)
		fmt.Fprintf(out, "  %-12s %14s %9s\n", "metric", "median", "target")
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
			if (!t.atLeast && m > t.most) || (t.atLeast && m < t.most) {
				verdict = "MISSED"
			}
			fmt.Fprintf(out, "  %-12s %14s %8s %7s\n", u, figure(m), bound(t), verdict)
		}
		for _, t := range targets() {
			if _, ok := s[name][t.metric]; t.bench == name && !ok {
				fmt.Fprintf(out, "  %-12s %14s %8s %7s\n", t.metric, "-", bound(t), "MISSING")
			}
		}
	}
	return found
}

// bound is a target's column: "≤ 0.300" or "≥ 90.000", padded to 9
// characters (the sign is one character but three bytes, which %9s would
// count).
func bound(t target) string {
	sign := "≤ "
	if t.atLeast {
		sign = "≥ "
	}
	s := sign + figure(t.most)
	return strings.Repeat(" ", max(0, 9-utf8.RuneCountInString(s))) + s
}

// figure prints a median: whole numbers for large ones, three decimals
// for the small ones (ratios).
func figure(v float64) string {
	if v >= 100 || v <= -100 {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'f', 3, 64)
}
