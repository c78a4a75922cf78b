package main

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// startup3 is a -count 3 run of BenchmarkStartupConcurrency, ratio
// medians 0.2 (met); missed is the same with ratios above the target.
const startup3 = "" +
	"BenchmarkStartupConcurrency/50x100ms-2 \t 5\t 7095777825 ns/op\t 5947 c1-ms\t 1025 c8-ms\t 0.1724 ratio\n" +
	"BenchmarkStartupConcurrency/50x100ms-2 \t 5\t 7095777825 ns/op\t 6000 c1-ms\t 1200 c8-ms\t 0.2000 ratio\n" +
	"BenchmarkStartupConcurrency/50x100ms-2 \t 5\t 7095777825 ns/op\t 6100 c1-ms\t 1300 c8-ms\t 0.2131 ratio\n"

func TestRunTargets(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     []string // lines of the report, in order
	}{
		{
			name: "met",
			in:   header + startup3 + footer,
			want: []string{
				"BenchmarkStartupConcurrency/50x100ms (median of runs): 50 servers with a 100 ms initialize all ready, StartupConcurrency 8 against 1 (G5)",
				"  metric               median    target\n",
				"  c1-ms                  6000",
				"  c8-ms                  1200",
				"  ns/op            7095777825",
				"  ratio                 0.200   ≤ 0.300     met",
			},
		},
		{
			name: "missed",
			in:   header + strings.ReplaceAll(startup3, " 0.2", " 0.4") + footer,
			want: []string{"  ratio                 0.400   ≤ 0.300  MISSED"},
		},
		{
			name: "the metric with the target is absent",
			in:   header + strings.ReplaceAll(startup3, " ratio", " other") + footer,
			want: []string{"  ratio                     -   ≤ 0.300 MISSING"},
		},
		{
			name: "a floor, and a benchmark with several targets",
			in: header +
				"BenchmarkToolSearchFleet-2 \t 1\t 5000 ns/op\t 8.5 deferred-%\t 60.0 top1-%\t 91.0 top5-heldout-%\t 95.0 top5-tuned-%\n" +
				"BenchmarkToolSearchFleet-2 \t 1\t 7000 ns/op\t 16.5 deferred-%\t 60.0 top1-%\t 89.0 top5-heldout-%\t 95.0 top5-tuned-%\n" +
				"BenchmarkToolSearchFleet-2 \t 1\t 6000 ns/op\t 9.5 deferred-%\t 60.0 top1-%\t 89.5 top5-heldout-%\t 95.0 top5-tuned-%\n" +
				footer,
			want: []string{
				"BenchmarkToolSearchFleet (median of runs): the npm fleet",
				"  deferred-%              9.500  ≤ 15.000     met",
				"  top1-%                 60.000\n",
				"  top5-heldout-%         89.500  ≥ 90.000  MISSED",
				"  top5-tuned-%           95.000\n",
			},
		},
		{
			name: "beside pairs, after them",
			in:   header + startup3 + stdio3 + footer,
			want: []string{"BenchmarkCallTool/stdio (median of runs)", "BenchmarkStartupConcurrency/50x100ms (median of runs): 50 servers"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := report(t, tc.in)
			rest := out
			for _, w := range tc.want {
				i := strings.Index(rest, w)
				if i < 0 {
					t.Fatalf("report lacks %q (in order):\n%s", w, out)
				}
				rest = rest[i+len(w):]
			}
		})
	}
}

// A target's figure that is not finite, or whose median is not above
// zero, is INVALID, not met: a NaN or a negative ratio passes "≤ bound".
// run prints the whole report, then fails.
func TestRunInvalid(t *testing.T) {
	pairRun := func(directAllocs, runtimeAllocs string) string {
		return "BenchmarkCallTool/stdio/same-2 \t 2000\t 1000 ns/op\t 500 cpu-ns/op\t 800 p50-ns\t " + directAllocs + " allocs/op\n" +
			"BenchmarkCallTool/stdio/runtime-2\t 2000\t 1000 ns/op\t 500 cpu-ns/op\t 800 p50-ns\t " + runtimeAllocs + " allocs/op\n"
	}
	for _, tc := range []struct {
		name, in string
		want     []string // lines of the report, in order
		invalid  int
	}{
		{
			name: "NaN and negative medians of figures with a target",
			in:   header + "BenchmarkManyServersMemory-2 \t 3\t 100 ns/op\t NaN rss-ratio\t -0.5 heap-ratio\t 1.1 heapalloc-ratio\n" + footer,
			want: []string{
				"  heap-ratio           -0.500   ≤ 1.300 INVALID\n",
				"  heapalloc-ratio       1.100\n",
				"  rss-ratio               NaN   ≤ 1.300 INVALID\n",
			},
			invalid: 2,
		},
		{
			name: "an infinite ratio, a zero share, a NaN in one of three runs",
			in: header +
				"BenchmarkStartupConcurrency/50x100ms-2 \t 5\t 1 ns/op\t +Inf ratio\n" +
				"BenchmarkToolSearchFleet-2 \t 1\t 5000 ns/op\t 0 deferred-%\t 91 top5-heldout-%\n" +
				"BenchmarkToolSearch1000-2 \t 1\t 5 ns/op\t 10 p50-us\n" +
				"BenchmarkToolSearch1000-2 \t 1\t 5 ns/op\t NaN p50-us\n" +
				"BenchmarkToolSearch1000-2 \t 1\t 5 ns/op\t 12 p50-us\n" + footer,
			want: []string{
				"  ratio                  +Inf   ≤ 0.300 INVALID\n",
				"  deferred-%             0.000  ≤ 15.000 INVALID\n",
				"  top5-heldout-%        91.000  ≥ 90.000     met\n",
				"  p50-us                10.000    ≤ 1000 INVALID\n",
			},
			invalid: 3,
		},
		{
			name: "a pair with a negative or NaN side",
			in:   header + pairRun("10", "-12") + pairRun("10", "NaN") + pairRun("10", "-12") + footer,
			want: []string{
				"BenchmarkCallTool/stdio (median of runs)",
				"  allocs/op                    10            -12  -1.200x",
				"≤1.050 INVALID\n",
				"  cpu-ns/op                   500            500   1.000x    1.000–1.000x ≤1.050 met\n",
			},
			invalid: 1,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			err := run(strings.NewReader(tc.in), &out)
			var ie incompleteError
			if !errors.As(err, &ie) || ie.invalid != tc.invalid {
				t.Errorf("run error = %v, want %d INVALID", err, tc.invalid)
			}
			// Columns are compared, not their padding.
			squeeze := func(s string) string { return strings.Join(strings.Fields(s), " ") }
			rest := squeeze(out.String())
			for _, w := range tc.want {
				i := strings.Index(rest, squeeze(w))
				if i < 0 {
					t.Fatalf("report lacks %q (in order):\n%s", w, out.String())
				}
				rest = rest[i+len(squeeze(w)):]
			}
			if want := fmt.Sprintf(" missed, %d missing, %d invalid\n", ie.missing, tc.invalid); !strings.HasSuffix(out.String(), want) {
				t.Errorf("report does not end with %q:\n%s", want, out.String())
			}
		})
	}
}

// A report whose every target was judged, met or missed, passes: a miss
// is a finding for the note, not a failure of `make bench`.
func TestRunMissedPasses(t *testing.T) {
	var in strings.Builder
	in.WriteString(header)
	for _, rt := range ratioTargets() {
		for _, side := range []string{"same", "runtime"} {
			v := "100"
			if side == "runtime" {
				v = "200" // 2×: every ratio target missed
			}
			fmt.Fprintf(&in, "%s/%s-2 \t 100\t %s ns/op\t %s cpu-ns/op\t %s p50-ns\t %s allocs/op\n", rt.base, side, v, v, v, v)
		}
	}
	for _, tg := range targets() {
		fmt.Fprintf(&in, "%s-2 \t 1\t 5 ns/op\t 5000 %s\n", tg.bench, tg.metric)
	}
	in.WriteString(footer)
	var out bytes.Buffer
	if err := run(strings.NewReader(in.String()), &out); err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	// 5000 is above every bound, and top5-heldout-%'s floor.
	missed := len(ratioTargets()) + len(targets()) - 1
	if want := fmt.Sprintf("\n1 targets met, %d missed, 0 missing, 0 invalid\n", missed); !strings.HasSuffix(out.String(), want) {
		t.Errorf("report does not end with %q:\n%s", want, out.String())
	}
	if strings.Contains(out.String(), "MISSING") || strings.Contains(out.String(), "INVALID") {
		t.Errorf("report has MISSING or INVALID:\n%s", out.String())
	}
}
