package main

import (
	"bytes"
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
			var out bytes.Buffer
			if err := run(strings.NewReader(tc.in), &out); err != nil {
				t.Fatalf("run: %v", err)
			}
			rest := out.String()
			for _, w := range tc.want {
				i := strings.Index(rest, w)
				if i < 0 {
					t.Fatalf("report lacks %q (in order):\n%s", w, out.String())
				}
				rest = rest[i+len(w):]
			}
		})
	}
}
