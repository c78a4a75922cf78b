// Command benchratio reads `go test -bench` output on stdin and prints each
// "runtime" sub-benchmark beside its "same" sibling (a direct client
// configured as the runtime's session is) with the ratio of every metric
// (median over the runs), so a target like "≤ 1.05× CPU" is read off one
// run on one machine; then beside its "direct" sibling (a bare client),
// with no target when a "same" one exists. Beside each ratio is its
// spread, the lowest and highest of the per-run ratios (the runs of the
// sides paired in order: the benchmarks run the sides one after another
// per round, named side, side#01, side#02, …, so run i of one side ran
// next to run i of the others), and, for a ratio with a target
// (ratioTargets), the target and whether the median met it.
//
// It pairs names of the form Benchmark<X>/<transport>/same (or /direct)
// and Benchmark<X>/<transport>/runtime, and likewise .../alone and
// .../subscribed (the same runtime without and with a subscriber that
// never reads), and .../runtime with .../noop and .../sdk (the same call
// with OpenTelemetry's no-op providers and with the SDK recording), and
// .../direct with .../gateway (a call through the gateway; its p50 is held
// to a difference, see ratioTarget). A
// benchmark with a target (targets.go) is printed with
// its medians beside the target and whether it was met.
//
// Every target is printed with a verdict: met, MISSED (a finding: the
// exit status stays 0), MISSING (its benchmark, a side of its pair or
// its metric is not in the input: a benchmark failed or never ran) or
// INVALID (a figure is not finite or a median not above zero, so no
// comparison holds), then a summary line counts them; with any MISSING
// or INVALID the command exits 1 after the report.
package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
)

func main() {
	if err := run(os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "benchratio:", err)
		os.Exit(1)
	}
}

// samples[name][unit] = values over the runs.
type samples map[string]map[string][]float64

// pairs are the sub-benchmark names compared: the baseline, then the one
// divided by it. A runtime with a "same" sibling (a direct client
// configured as the runtime's session is) is held to its targets against
// that one; against "direct" (a bare client) it is then printed with no
// target, as what the features the runtime advertises cost on top.
func pairs() [][2]string {
	return [][2]string{{"same", "runtime"}, {"direct", "runtime"}, {"alone", "subscribed"}, {"runtime", "noop"}, {"runtime", "sdk"}, {"direct", "gateway"}}
}

// bareHeading follows the base name of a runtime/direct pair printed
// beside a runtime/same one.
const bareHeading = ", runtime against a bare client (no target: our layer plus what the advertised features cost)"

// run prints the report of the benchmark output in: the pairs, then the
// benchmarks with targets, then a summary of the verdicts. A missed target
// is a finding, not a failure; a target with no data (MISSING: its
// benchmark, a side of its pair or its metric is absent) or with data no
// ratio can be trusted on (INVALID) makes run return an error once the
// whole report is printed, so that `make bench` fails.
func run(in io.Reader, out io.Writer) error {
	s, order, err := readSamples(in)
	if err != nil {
		return err
	}
	if len(order) == 0 {
		return fmt.Errorf("no benchmark results in the input")
	}
	var t tally
	judged := map[string]bool{} // the bases printed with their ratio targets
	for _, name := range order {
		for _, pair := range pairs() {
			base, ok := strings.CutSuffix(name, "/"+pair[1])
			baseline := s[base+"/"+pair[0]]
			if !ok || base == "" || baseline == nil {
				continue
			}
			heading, goals := base, ratioGoals(base, pair)
			if _, same := s[base+"/same"]; same && pair[0] == "direct" {
				heading, goals = base+bareHeading, nil
			}
			if len(goals) > 0 {
				judged[base] = true
			}
			printPair(out, heading, pair, baseline, s[name], goals, &t)
		}
	}
	// A ratio target whose pair is not in the input (a side failed or
	// never ran) is printed with each metric MISSING, not left out.
	for _, rt := range ratioTargets() {
		if !judged[rt.base] {
			judged[rt.base] = true
			pair := rt.sides()
			printPair(out, rt.base, pair, s[rt.base+"/"+pair[0]], s[rt.base+"/"+pair[1]], ratioGoals(rt.base, pair), &t)
		}
	}
	printTargets(out, s, order, &t)
	fmt.Fprintf(out, "\n%s\n", t)
	if t.missing+t.invalid > 0 {
		return incompleteError{t.missing, t.invalid}
	}
	return nil
}

// incompleteError is run's error when a target could not be judged: the
// report is printed, but `make bench` must not pass on it.
type incompleteError struct{ missing, invalid int }

func (e incompleteError) Error() string {
	return fmt.Sprintf("%d targets MISSING and %d INVALID in the input (a benchmark failed, never ran or measured nothing)", e.missing, e.invalid)
}

// readSamples reads `go test -bench` output: the samples of each benchmark, by
// name without its -GOMAXPROCS suffix and a repeat's #NN (the k-th
// result of a name is its k-th run), and the names in input order.
func readSamples(in io.Reader) (samples, []string, error) {
	s := samples{}
	var order []string
	sc := bufio.NewScanner(in)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") {
			continue
		}
		name := f[0]
		if i := strings.LastIndexByte(name, '-'); i > 0 { // strip -GOMAXPROCS
			if _, err := strconv.Atoi(name[i+1:]); err == nil {
				name = name[:i]
			}
		}
		if i := strings.LastIndexByte(name, '#'); i > 0 { // strip a repeat's #NN (interleaved rounds)
			if _, err := strconv.Atoi(name[i+1:]); err == nil {
				name = name[:i]
			}
		}
		if s[name] == nil {
			s[name] = map[string][]float64{}
			order = append(order, name)
		}
		for i := 2; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err == nil {
				s[name][f[i+1]] = append(s[name][f[i+1]], v)
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, nil, fmt.Errorf("reading the benchmark output: %w", err)
	}
	return s, order, nil
}

// printPair prints one pair under heading: per metric, both medians
// ("-" for a side without the metric), their ratio, the spread of the
// per-run ratios, and the target and its verdict if goals has one for
// the metric, counted in t. A target on the difference (goal.diff)
// prints the difference of the medians and the spread of the per-run
// differences in place of the ratio and its spread, signed ("+750000",
// "+700000–+800000"), and its bound as "≤+300000".
func printPair(out io.Writer, heading string, pair [2]string, direct, other map[string][]float64, goals map[string]goal, t *tally) {
	fmt.Fprintf(out, "\n%s (median of runs)\n", heading)
	fmt.Fprintf(out, "  %-16s %14s %14s %8s %15s %s\n", "metric", pair[0], pair[1], "ratio", "spread", "target")
	units := make([]string, 0, len(other))
	for u := range other {
		units = append(units, u)
	}
	for u := range goals {
		if _, ok := other[u]; !ok {
			units = append(units, u) // a target whose metric is missing
		}
	}
	slices.Sort(units)
	for _, u := range units {
		d, r := median(direct[u]), median(other[u])
		g, targeted := goals[u]
		ratio, spread := "-", "-"
		switch {
		case g.diff:
			if len(direct[u]) > 0 && len(other[u]) > 0 {
				ratio = fmt.Sprintf("%+.0f", r-d)
			}
			if lo, hi, ok := diffSpread(direct[u], other[u]); ok {
				spread = fmt.Sprintf("%+.0f–%+.0f", lo, hi)
			}
		default:
			if d > 0 && len(other[u]) > 0 {
				ratio = fmt.Sprintf("%.3fx", r/d)
			}
			if lo, hi, ok := ratioSpread(direct[u], other[u]); ok {
				spread = fmt.Sprintf("%.3f–%.3fx", lo, hi)
			}
		}
		line := fmt.Sprintf("  %-16s %14s %14s %8s %15s", u, cell(direct[u]), cell(other[u]), ratio, spread)
		if targeted {
			var v verdict
			switch {
			case len(direct[u]) == 0 || len(other[u]) == 0:
				v = missing
			case !valid(direct[u]) || !valid(other[u]):
				v = invalid
			case g.diff && r-d > g.bound, !g.diff && r/d > g.bound:
				v = missed
			}
			t.add(v)
			if g.diff {
				line += fmt.Sprintf(" ≤%+.0f %s", g.bound, v)
			} else {
				line += fmt.Sprintf(" ≤%.3f %s", g.bound, v)
			}
		}
		fmt.Fprintln(out, line)
	}
}

// cell is a side's median in a pair's row, "-" where it has no runs.
func cell(v []float64) string {
	if len(v) == 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f", median(v))
}

// ratioSpread is the lowest and highest of other[i]/direct[i] over the
// runs both sides have (a run whose direct figure is 0 has no ratio).
func ratioSpread(direct, other []float64) (lo, hi float64, ok bool) {
	for i := range min(len(direct), len(other)) {
		if direct[i] <= 0 {
			continue
		}
		q := other[i] / direct[i]
		if !ok || q < lo {
			lo = q
		}
		if !ok || q > hi {
			hi = q
		}
		ok = true
	}
	return lo, hi, ok
}

// diffSpread is the lowest and highest of other[i] − direct[i] over the
// runs both sides have.
func diffSpread(direct, other []float64) (lo, hi float64, ok bool) {
	for i := range min(len(direct), len(other)) {
		q := other[i] - direct[i]
		if !ok || q < lo {
			lo = q
		}
		if !ok || q > hi {
			hi = q
		}
		ok = true
	}
	return lo, hi, ok
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	v = slices.Clone(v)
	slices.Sort(v)
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}
