package main

import (
	"fmt"
	"math"
)

// verdict is what a target's figures say of it.
type verdict int

const (
	met     verdict = iota // the median is within the bound
	missed                 // the median is beyond the bound: a finding
	missing                // the benchmark, a side of its pair or the metric is not in the input
	invalid                // a figure is not finite, or a median not above zero: no ratio to trust
)

// String is the verdict as the report prints it.
func (v verdict) String() string {
	switch v {
	case met:
		return "met"
	case missed:
		return "MISSED"
	case missing:
		return "MISSING"
	default:
		return "INVALID"
	}
}

// tally counts the verdicts of a report.
type tally struct{ met, missed, missing, invalid int }

func (t *tally) add(v verdict) {
	switch v {
	case met:
		t.met++
	case missed:
		t.missed++
	case missing:
		t.missing++
	default:
		t.invalid++
	}
}

// String is the report's summary line.
func (t tally) String() string {
	return fmt.Sprintf("%d targets met, %d missed, %d missing, %d invalid", t.met, t.missed, t.missing, t.invalid)
}

// valid reports whether a metric's runs can be judged: every figure
// finite (a NaN would sort anywhere and an infinity swamp the median)
// and the median above zero (every figure with a target is a time, a
// count, a share or a ratio of positive figures; zero or below means the
// benchmark measured nothing, or subtracted noise from noise).
func valid(v []float64) bool {
	for _, x := range v {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return false
		}
	}
	return median(v) > 0
}
