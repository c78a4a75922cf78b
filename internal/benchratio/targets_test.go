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
				"  metric               median   target\n",
				"  c1-ms                  6000",
				"  c8-ms                  1200",
				"  ns/op            7095777825",
				"  ratio                 0.200  ≤ 0.300     met",
			},
		},
		{
			name: "missed",
			in:   header + strings.ReplaceAll(startup3, " 0.2", " 0.4") + footer,
			want: []string{"  ratio                 0.400  ≤ 0.300  MISSED"},
		},
		{
			name: "the metric with the target is absent",
			in:   header + strings.ReplaceAll(startup3, " ratio", " other") + footer,
			want: []string{"  ratio                     -  ≤ 0.300 MISSING"},
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
