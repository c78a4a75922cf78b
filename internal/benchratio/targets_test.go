package main

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
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
	written := map[string]bool{}
	for _, rt := range ratioTargets() {
		for i, side := range rt.sides() {
			if written[rt.base+"/"+side] {
				continue
			}
			written[rt.base+"/"+side] = true
			v := "1000000"
			if i == 1 {
				v = "2500000" // 2.5× and 1.5 ms more: every ratio and difference target missed
			}
			fmt.Fprintf(&in, "%s/%s-2 \t 100\t %s ns/op\t %s cpu-ns/op\t %s p50-ns\t %s allocs/op\n", rt.base, side, v, v, v, v)
		}
	}
	for _, tg := range targets() {
		if tg.metric != "" {
			fmt.Fprintf(&in, "%s-2 \t 1\t 5 ns/op\t 5000 %s\n", tg.bench, tg.metric)
		}
	}
	in.WriteString(footer)
	var out bytes.Buffer
	if err := run(strings.NewReader(in.String()), &out); err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	// 5000 is above every bound of targets(), and top5-heldout-%'s floor.
	missed := len(ratioTargets()) + judged() - 1
	if want := fmt.Sprintf("\n1 targets met, %d missed, 0 missing, 0 invalid\n", missed); !strings.HasSuffix(out.String(), want) {
		t.Errorf("report does not end with %q:\n%s", want, out.String())
	}
	if strings.Contains(out.String(), "MISSING") || strings.Contains(out.String(), "INVALID") {
		t.Errorf("report has MISSING or INVALID:\n%s", out.String())
	}
}

// The gateway's call pair: its p50 is held to a difference (gateway −
// direct, at most 0.3 ms), its CPU to a ratio (at most 2×); the other
// metrics print their ratios with no target.
func TestRunGatewayPair(t *testing.T) {
	line := func(side string, p50, cpu float64) string {
		return fmt.Sprintf("BenchmarkGatewayCall/stdio/%s-2 \t 3000\t 1000 ns/op\t %.0f cpu-ns/op\t %.0f p50-ns\n", side, cpu, p50)
	}
	for _, tc := range []struct {
		name, in string
		want     []row
		summary  string
	}{
		{
			name: "both met, the runs rotated",
			in: line("direct", 500_000, 300_000) + line("gateway", 700_000, 500_000) +
				line("gateway#01", 750_000, 650_000) + line("direct#01", 480_000, 320_000) +
				line("direct#02", 520_000, 310_000) + line("gateway#02", 900_000, 600_000),
			want: []row{
				{"cpu-ns/op", "310000", "600000", "1.935x", "1.667–2.031x", "≤2.000 met"},
				{"ns/op", "1000", "1000", "1.000x", "1.000–1.000x", ""},
				{"p50-ns", "500000", "750000", "+250000", "+200000–+380000", "≤+300000 met"},
			},
			summary: "2 targets met, 0 missed, 0 missing",
		},
		{
			name: "both missed",
			in:   line("direct", 500_000, 300_000) + line("gateway", 900_000, 700_000),
			want: []row{
				{"cpu-ns/op", "300000", "700000", "2.333x", "2.333–2.333x", "≤2.000 MISSED"},
				{"ns/op", "1000", "1000", "1.000x", "1.000–1.000x", ""},
				{"p50-ns", "500000", "900000", "+400000", "+400000–+400000", "≤+300000 MISSED"},
			},
			summary: "0 targets met, 2 missed, 0 missing",
		},
		{
			name: "a gateway faster than direct is met, not INVALID",
			in:   line("direct", 500_000, 300_000) + line("gateway", 400_000, 300_000),
			want: []row{
				{"cpu-ns/op", "300000", "300000", "1.000x", "1.000–1.000x", "≤2.000 met"},
				{"ns/op", "1000", "1000", "1.000x", "1.000–1.000x", ""},
				{"p50-ns", "500000", "400000", "-100000", "-100000–-100000", "≤+300000 met"},
			},
			summary: "2 targets met, 0 missed, 0 missing",
		},
		{
			name: "the gateway side failed",
			in:   line("direct", 500_000, 300_000),
			want: []row{
				{"cpu-ns/op", "300000", "-", "-", "-", "≤2.000 MISSING"},
				{"p50-ns", "500000", "-", "-", "-", "≤+300000 MISSING"},
			},
			summary: "0 targets met, 0 missed, 2 missing",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := report(t, header+tc.in+footer)
			i := slices.IndexFunc(parse(t, out), func(b block) bool { return b.base == "BenchmarkGatewayCall/stdio" })
			if i < 0 || !slices.Equal(parse(t, out)[i].rows, tc.want) {
				t.Errorf("report:\n%s\nwant rows %+v", out, tc.want)
			}
			// The other targets are MISSING here: count the gateway's alone.
			if !strings.Contains(out, "\nBenchmarkGatewayCall/stdio (median of runs)\n") {
				t.Errorf("report lacks the gateway pair:\n%s", out)
			}
			var tl tally
			for _, b := range parse(t, out) {
				if b.base != "BenchmarkGatewayCall/stdio" {
					continue
				}
				for _, r := range b.rows {
					switch {
					case strings.HasSuffix(r.goal, " met"):
						tl.met++
					case strings.HasSuffix(r.goal, " MISSED"):
						tl.missed++
					case strings.HasSuffix(r.goal, " MISSING"):
						tl.missing++
					}
				}
			}
			if got := tl.String(); !strings.HasPrefix(got, tc.summary) {
				t.Errorf("gateway verdicts %q, want %q", got, tc.summary)
			}
		})
	}
}

// judged is how many of targets() get a verdict (those with a metric).
func judged() int {
	n := 0
	for _, tg := range targets() {
		if tg.metric != "" {
			n++
		}
	}
	return n
}

// A benchmark listed with no metric is printed under its heading, with
// no verdict, and is not MISSING when absent.
func TestRunHeadingOnly(t *testing.T) {
	in := header + "BenchmarkGatewayClients/converged-2 \t 30\t 107404984 ns/op\t 192.0 max-ms\t 88.48 p50-ms\n" + footer
	out := report(t, in)
	for _, w := range []string{
		"BenchmarkGatewayClients/converged (median of runs): 100 clients of one gateway: a registry change to the last one listing the new tools, ms (X4; no target)\n",
		"  max-ms                  192\n",
		"  p50-ms               88.480\n",
	} {
		if !strings.Contains(out, w) {
			t.Errorf("report lacks %q:\n%s", w, out)
		}
	}
	if want := fmt.Sprintf(" %d missing, 0 invalid\n", len(ratioTargets())+judged()); !strings.HasSuffix(out, want) {
		t.Errorf("report does not end with %q:\n%s", want, out)
	}
}
