package main

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
)

// header and footer are what `go test -bench` prints around the results.
const (
	header = "goos: linux\ngoarch: amd64\npkg: github.com/openprogram/mcpvisor/runtime\ncpu: AMD EPYC 7B13\n"
	footer = "PASS\nok  \tgithub.com/openprogram/mcpvisor/runtime\t75.578s\n"
)

// stdio3 is a -count 3 run of one pair, with the medians, the spreads of
// the per-run ratios and the targets of BenchmarkCallTool/stdio
//
//	metric     direct  runtime  ratio   spread        target
//	B/op         1000     1200  1.200x  1.200–1.200x
//	allocs/op      10       12  1.200x  1.182–1.200x  ≤1.050 MISSED
//	cpu-ns/op     500      525  1.050x  0.883–1.275x  ≤1.050 met
//	ns/op        1000     1100  1.100x  0.909–1.444x
//	p50-ns        810      900  1.111x  1.073–1.136x  ≤1.050 MISSED
const stdio3 = "" +
	"BenchmarkCallTool/stdio/direct-2  \t    2000\t      1000 ns/op\t       500.0 cpu-ns/op\t       800.0 p50-ns\t    1000 B/op\t      10 allocs/op\n" +
	"BenchmarkCallTool/stdio/direct-2  \t    2000\t       900 ns/op\t       400.0 cpu-ns/op\t       820.0 p50-ns\t    1000 B/op\t      10 allocs/op\n" +
	"BenchmarkCallTool/stdio/direct-2  \t    2000\t      1100 ns/op\t       600.0 cpu-ns/op\t       810.0 p50-ns\t    1000 B/op\t      11 allocs/op\n" +
	"BenchmarkCallTool/stdio/runtime-2 \t    2000\t      1100 ns/op\t       525.0 cpu-ns/op\t       900.0 p50-ns\t    1200 B/op\t      12 allocs/op\n" +
	"BenchmarkCallTool/stdio/runtime-2 \t    2000\t      1300 ns/op\t       510.0 cpu-ns/op\t       880.0 p50-ns\t    1200 B/op\t      12 allocs/op\n" +
	"BenchmarkCallTool/stdio/runtime-2 \t    2000\t      1000 ns/op\t       530.0 cpu-ns/op\t       920.0 p50-ns\t    1200 B/op\t      13 allocs/op\n"

var stdio3Rows = []row{
	{"B/op", "1000", "1200", "1.200x", "1.200–1.200x", ""},
	{"allocs/op", "10", "12", "1.200x", "1.182–1.200x", "≤1.050 MISSED"},
	{"cpu-ns/op", "500", "525", "1.050x", "0.883–1.275x", "≤1.050 met"},
	{"ns/op", "1000", "1100", "1.100x", "0.909–1.444x", ""},
	{"p50-ns", "810", "900", "1.111x", "1.073–1.136x", "≤1.050 MISSED"},
}

// untargeted are rows of a pair without targets.
func untargeted(rows []row) []row {
	out := slices.Clone(rows)
	for i := range out {
		out[i].goal = ""
	}
	return out
}

// row is a metric's line: goal is the target and verdict, if any.
type row struct{ metric, direct, runtime, ratio, spread, goal string }

type block struct {
	base string
	rows []row
}

// parse reads run's report back: one block per pair, in output order
// (the benchmarks with targets and the summary line after them are
// TestRunTargets').
func parse(t *testing.T, out string) []block {
	t.Helper()
	var blocks []block
	for line := range strings.Lines(out) {
		line = strings.TrimRight(line, "\n")
		if strings.Contains(line, " (median of runs): ") || strings.Contains(line, " targets met, ") {
			break
		}
		switch {
		case strings.TrimSpace(line) == "":
		case strings.HasSuffix(line, " (median of runs)"):
			blocks = append(blocks, block{base: strings.TrimSuffix(line, " (median of runs)")})
		case len(blocks) == 0:
			t.Fatalf("line before any block: %q", line)
		default:
			f := strings.Fields(line)
			if f[0] == "metric" {
				continue
			}
			if len(f) != 5 && len(f) != 7 {
				t.Fatalf("row %q has %d fields, want 5 (or 7 with a target)", line, len(f))
			}
			b := &blocks[len(blocks)-1]
			b.rows = append(b.rows, row{f[0], f[1], f[2], f[3], f[4], strings.Join(f[5:], " ")})
		}
	}
	return blocks
}

// report is run's report of in; an error other than the one for targets
// it could not judge (MISSING or INVALID) fails the test.
func report(t *testing.T, in string) string {
	t.Helper()
	var out bytes.Buffer
	if err := run(strings.NewReader(in), &out); err != nil && !errors.As(err, new(incompleteError)) {
		t.Fatalf("run: %v", err)
	}
	return out.String()
}

// inInput drops the blocks of benchmarks absent from in: run prints one
// for each target whose benchmark is not in the input, all MISSING.
func inInput(blocks []block, in string) []block {
	return slices.DeleteFunc(blocks, func(b block) bool {
		return !strings.Contains(in, strings.TrimSuffix(b.base, bareHeading)+"/")
	})
}

// noSuffix drops the -GOMAXPROCS suffix, as `go test -cpu 1` prints names.
func noSuffix(s string) string {
	return strings.NewReplacer("direct-2 ", "direct ", "runtime-2 ", "runtime ").Replace(s)
}

// runtimeFirst puts the runtime lines before the direct ones.
func runtimeFirst(s string) string {
	lines := strings.SplitAfter(s, "\n")
	return strings.Join(lines[3:], "") + strings.Join(lines[:3], "")
}

// threeSides is stdio3 as BenchmarkCallTool prints it now: a "same" side
// (here with the direct figures) and the three sides interleaved round
// by round, the testing package naming the repeats side#01, side#02.
func threeSides() string {
	lines := strings.SplitAfter(stdio3, "\n")
	var b strings.Builder
	for i := range 3 {
		suffix := ""
		if i > 0 {
			suffix = fmt.Sprintf("#%02d", i)
		}
		direct, runtime := lines[i], lines[3+i]
		b.WriteString(strings.Replace(direct, "/direct-2", "/direct"+suffix+"-2", 1))
		b.WriteString(strings.Replace(direct, "/direct-2", "/same"+suffix+"-2", 1))
		b.WriteString(strings.Replace(runtime, "/runtime-2", "/runtime"+suffix+"-2", 1))
	}
	return b.String()
}

// rotated reorders threeSides' rounds as interleave runs them: round i
// starts at side i mod 3.
func rotated(s string) string {
	lines := strings.SplitAfter(s, "\n")
	var b strings.Builder
	for i := range 3 {
		round := lines[3*i : 3*i+3]
		for j := range 3 {
			b.WriteString(round[(i+j)%3])
		}
	}
	return b.String()
}

// rename moves the stdio pair to another transport.
func rename(s, transport string) string {
	return strings.ReplaceAll(s, "/stdio/", "/"+transport+"/")
}

func TestRunPairs(t *testing.T) {
	cases := []struct {
		name string
		in   string
		want []block
	}{
		{
			name: "-count 3 with GOMAXPROCS suffix",
			in:   header + stdio3 + footer,
			want: []block{{"BenchmarkCallTool/stdio", stdio3Rows}},
		},
		{
			name: "names without suffix",
			in:   header + noSuffix(stdio3) + footer,
			want: []block{{"BenchmarkCallTool/stdio", stdio3Rows}},
		},
		{
			name: "runtime lines before direct lines",
			in:   header + runtimeFirst(stdio3) + footer,
			want: []block{{"BenchmarkCallTool/stdio", stdio3Rows}},
		},
		{
			name: "three sides interleaved: the targets are runtime/same's, runtime/direct has none",
			in:   header + threeSides() + footer,
			want: []block{
				{"BenchmarkCallTool/stdio", stdio3Rows},
				{"BenchmarkCallTool/stdio" + bareHeading, untargeted(stdio3Rows)},
			},
		},
		{
			name: "sides rotated round by round: the k-th run of each side pairs with the k-th of the others",
			in:   header + rotated(threeSides()) + footer,
			want: []block{
				{"BenchmarkCallTool/stdio", stdio3Rows},
				{"BenchmarkCallTool/stdio" + bareHeading, untargeted(stdio3Rows)},
			},
		},
		{
			name: "an alone/subscribed pair",
			in: header + strings.NewReplacer("/direct", "/alone", "/runtime", "/subscribed",
				"CallTool/", "CallToolSubscriber/").Replace(stdio3) + footer,
			want: []block{{"BenchmarkCallToolSubscriber/stdio", untargeted(stdio3Rows)}},
		},
		{
			name: "two transports in input order",
			in:   header + rename(stdio3, "inmemory") + stdio3 + footer,
			want: []block{{"BenchmarkCallTool/inmemory", stdio3Rows}, {"BenchmarkCallTool/stdio", stdio3Rows}},
		},
		{
			name: "a pair without targets",
			in:   header + rename(stdio3, "sse") + footer,
			want: []block{{"BenchmarkCallTool/sse", untargeted(stdio3Rows)}},
		},
		{
			name: "concurrent callers: the time per call has a target",
			in:   header + strings.ReplaceAll(stdio3, "CallTool/stdio/", "CallToolConcurrent/stdio/64/") + footer,
			want: []block{{"BenchmarkCallToolConcurrent/stdio/64", []row{
				{"B/op", "1000", "1200", "1.200x", "1.200–1.200x", ""},
				{"allocs/op", "10", "12", "1.200x", "1.182–1.200x", ""},
				{"cpu-ns/op", "500", "525", "1.050x", "0.883–1.275x", ""},
				{"ns/op", "1000", "1100", "1.100x", "0.909–1.444x", "≤1.050 MISSED"},
				{"p50-ns", "810", "900", "1.111x", "1.073–1.136x", ""},
			}}},
		},
		{
			name: "met within the target; a run with more runs on one side pairs what both have",
			in: header +
				"BenchmarkCallToolConcurrent/stdio/8/direct-2 \t 2000\t 1000 ns/op\n" +
				"BenchmarkCallToolConcurrent/stdio/8/runtime-2\t 2000\t 1040 ns/op\n" +
				"BenchmarkCallToolConcurrent/stdio/8/direct-2 \t 2000\t 1000 ns/op\n" +
				"BenchmarkCallToolConcurrent/stdio/8/runtime-2\t 2000\t 990 ns/op\n" +
				"BenchmarkCallToolConcurrent/stdio/8/direct-2 \t 2000\t 1000 ns/op\n" +
				footer,
			want: []block{{"BenchmarkCallToolConcurrent/stdio/8", []row{
				{"ns/op", "1000", "1015", "1.015x", "0.990–1.040x", "≤1.050 met"},
			}}},
		},
		{
			name: "a target whose metric is missing",
			in: header +
				"BenchmarkCallTool/http/direct-2 \t 2000\t 1000 ns/op\n" +
				"BenchmarkCallTool/http/runtime-2\t 2000\t 1100 ns/op\n" +
				footer,
			want: []block{{"BenchmarkCallTool/http", []row{
				{"allocs/op", "-", "-", "-", "-", "≤1.050 MISSING"},
				{"cpu-ns/op", "-", "-", "-", "-", "≤1.050 MISSING"},
				{"ns/op", "1000", "1100", "1.100x", "1.100–1.100x", ""},
				{"p50-ns", "-", "-", "-", "-", "≤1.050 MISSING"},
			}}},
		},
		{
			name: "a dash in the transport name is kept, the numeric suffix is not",
			in:   header + strings.ReplaceAll(rename(stdio3, "http-sse"), "-2 ", "-16 ") + footer,
			want: []block{{"BenchmarkCallTool/http-sse", untargeted(stdio3Rows)}},
		},
		{
			name: "a dash in the transport name without suffix",
			in:   header + noSuffix(rename(stdio3, "http-sse")) + footer,
			want: []block{{"BenchmarkCallTool/http-sse", untargeted(stdio3Rows)}},
		},
		{
			name: "-v output, logs and unrelated benchmarks are ignored",
			in: header +
				"BenchmarkCallTool\nBenchmarkCallTool/stdio\nBenchmarkCallTool/stdio/direct\n" +
				"    bench_test.go:40: example server started, pid 4242\n" +
				stdio3[:strings.Index(stdio3, "BenchmarkCallTool/stdio/runtime")] +
				"BenchmarkCallTool/stdio/runtime\n" +
				"BenchmarkParseConfig-2 \t  500000\t      2345 ns/op\t     512 B/op\t       9 allocs/op\n" +
				"--- BENCH: BenchmarkCallTool/stdio/runtime-2\n" +
				stdio3[strings.Index(stdio3, "BenchmarkCallTool/stdio/runtime"):] +
				footer,
			want: []block{{"BenchmarkCallTool/stdio", stdio3Rows}},
		},
		{
			name: "-count 4: the median of an even count is the mean of the middle two",
			in: header +
				"BenchmarkCallTool/stdio/direct-2 \t 2000\t 1000 ns/op\n" +
				"BenchmarkCallTool/stdio/direct-2 \t 2000\t 1200 ns/op\n" +
				"BenchmarkCallTool/stdio/direct-2 \t 2000\t  900 ns/op\n" +
				"BenchmarkCallTool/stdio/direct-2 \t 2000\t 1100 ns/op\n" +
				"BenchmarkCallTool/stdio/runtime-2\t 2000\t 1160 ns/op\n" +
				"BenchmarkCallTool/stdio/runtime-2\t 2000\t 1150 ns/op\n" +
				"BenchmarkCallTool/stdio/runtime-2\t 2000\t 9999 ns/op\n" +
				"BenchmarkCallTool/stdio/runtime-2\t 2000\t  100 ns/op\n" +
				footer,
			want: []block{{"BenchmarkCallTool/stdio", []row{
				{"allocs/op", "-", "-", "-", "-", "≤1.050 MISSING"},
				{"cpu-ns/op", "-", "-", "-", "-", "≤1.050 MISSING"},
				{"ns/op", "1050", "1155", "1.100x", "0.091–11.110x", ""},
				{"p50-ns", "-", "-", "-", "-", "≤1.050 MISSING"},
			}}},
		},
		{
			name: "a zero or missing direct metric has no ratio, and a target on a zero median is INVALID",
			in: header +
				"BenchmarkCallTool/stdio/direct-2 \t 2000\t 1000 ns/op\t       0 B/op\t       0 allocs/op\n" +
				"BenchmarkCallTool/stdio/runtime-2\t 2000\t 2000 ns/op\t      64 B/op\t       1 allocs/op\t 3.000 retries/op\n" +
				footer,
			want: []block{{"BenchmarkCallTool/stdio", []row{
				{"B/op", "0", "64", "-", "-", ""},
				{"allocs/op", "0", "1", "-", "-", "≤1.050 INVALID"},
				{"cpu-ns/op", "-", "-", "-", "-", "≤1.050 MISSING"},
				{"ns/op", "1000", "2000", "2.000x", "2.000–2.000x", ""},
				{"p50-ns", "-", "-", "-", "-", "≤1.050 MISSING"},
				{"retries/op", "-", "3", "-", "-", ""},
			}}},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out := report(t, tc.in)
			got := inInput(parse(t, out), tc.in)
			if !slices.EqualFunc(got, tc.want, func(a, b block) bool { return a.base == b.base && slices.Equal(a.rows, b.rows) }) {
				t.Errorf("report:\n%s\nparsed %+v\nwant   %+v", out, got, tc.want)
			}
		})
	}
}

// The report's exact layout, for the README and for eyes.
func TestRunLayout(t *testing.T) {
	out := report(t, header+stdio3+footer)
	want := `
BenchmarkCallTool/stdio (median of runs)
  metric                   direct        runtime    ratio          spread target
  B/op                       1000           1200   1.200x    1.200–1.200x
  allocs/op                    10             12   1.200x    1.182–1.200x ≤1.050 MISSED
  cpu-ns/op                   500            525   1.050x    0.883–1.275x ≤1.050 met
  ns/op                      1000           1100   1.100x    0.909–1.444x
  p50-ns                      810            900   1.111x    1.073–1.136x ≤1.050 MISSED
`
	if !strings.HasPrefix(out, want+"\n") {
		t.Errorf("report =\n%s\nwant it to begin with\n%s", out, want)
	}
	// The other targets' benchmarks are not in the input.
	if summary := fmt.Sprintf("\n1 targets met, 2 missed, %d missing, 0 invalid\n", len(ratioTargets())+judged()-3); !strings.HasSuffix(out, summary) {
		t.Errorf("report =\n%s\nwant it to end with %q", out, summary)
	}
}

// Input without a benchmark result is an error, with nothing printed.
func TestRunNoResults(t *testing.T) {
	for _, in := range []string{
		"",
		header + "PASS\n" + footer,
		"--- FAIL: TestCallTool (0.01s)\nFAIL\nexit status 1\nFAIL\tgithub.com/openprogram/mcpvisor/runtime\t0.1s\n",
	} {
		var out bytes.Buffer
		err := run(strings.NewReader(in), &out)
		if err == nil || !strings.Contains(err.Error(), "no benchmark results") {
			t.Errorf("run(%q) error = %v, want one about no results", in, err)
		}
		if out.Len() != 0 {
			t.Errorf("run(%q) printed %q with no results", in, out.String())
		}
	}
}

// A target whose benchmark, pair side or metric is not in the input is
// printed MISSING (a benchmark that failed or never ran is not silent),
// the summary counts it, and run fails once the report is printed.
func TestRunMissing(t *testing.T) {
	lines := strings.SplitAfter(threeSides(), "\n")
	var direct, same, runtime string
	for _, l := range lines {
		switch {
		case strings.Contains(l, "/direct"):
			direct += l
		case strings.Contains(l, "/same"):
			same += l
		case strings.Contains(l, "/runtime"):
			runtime += l
		}
	}
	all := len(ratioTargets()) + judged()
	stdioMissing := []row{
		{"allocs/op", "-", "-", "-", "-", "≤1.050 MISSING"},
		{"cpu-ns/op", "-", "-", "-", "-", "≤1.050 MISSING"},
		{"p50-ns", "-", "-", "-", "-", "≤1.050 MISSING"},
	}
	sameOnly := []row{
		{"allocs/op", "10", "-", "-", "-", "≤1.050 MISSING"},
		{"cpu-ns/op", "500", "-", "-", "-", "≤1.050 MISSING"},
		{"p50-ns", "810", "-", "-", "-", "≤1.050 MISSING"},
	}
	cases := []struct {
		name    string
		in      string
		stdio   []row // the BenchmarkCallTool/stdio block's rows
		summary string
		missing int
	}{
		{
			name: "the runtime side failed: direct and same only",
			in:   header + direct + same + footer, stdio: sameOnly,
			summary: fmt.Sprintf("0 targets met, 0 missed, %d missing, 0 invalid", all), missing: all,
		},
		{
			name: "direct only",
			in:   header + direct + footer, stdio: stdioMissing,
			summary: fmt.Sprintf("0 targets met, 0 missed, %d missing, 0 invalid", all), missing: all,
		},
		{
			name: "runtime only",
			in:   header + runtime + footer,
			stdio: []row{
				{"B/op", "-", "1200", "-", "-", ""},
				{"allocs/op", "-", "12", "-", "-", "≤1.050 MISSING"},
				{"cpu-ns/op", "-", "525", "-", "-", "≤1.050 MISSING"},
				{"ns/op", "-", "1100", "-", "-", ""},
				{"p50-ns", "-", "900", "-", "-", "≤1.050 MISSING"},
			},
			summary: fmt.Sprintf("0 targets met, 0 missed, %d missing, 0 invalid", all), missing: all,
		},
		{
			name: "the sides of different transports",
			in:   header + direct + same + rename(runtime, "sse") + footer, stdio: sameOnly,
			summary: fmt.Sprintf("0 targets met, 0 missed, %d missing, 0 invalid", all), missing: all,
		},
		{
			name: "other benchmarks only",
			in:   header + "BenchmarkParseConfig-2 \t 500000\t 2345 ns/op\t 512 B/op\t 9 allocs/op\n" + footer, stdio: stdioMissing,
			summary: fmt.Sprintf("0 targets met, 0 missed, %d missing, 0 invalid", all), missing: all,
		},
		{
			name: "a whole pair: only the other targets are missing",
			in:   header + threeSides() + footer, stdio: stdio3Rows,
			summary: fmt.Sprintf("1 targets met, 2 missed, %d missing, 0 invalid", all-3), missing: all - 3,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			err := run(strings.NewReader(tc.in), &out)
			var ie incompleteError
			if !errors.As(err, &ie) || ie.missing != tc.missing || ie.invalid != 0 {
				t.Errorf("run error = %v, want %d targets missing", err, tc.missing)
			}
			blocks := parse(t, strings.TrimSuffix(out.String(), "\n"+tc.summary+"\n"))
			if !strings.HasSuffix(out.String(), "\n"+tc.summary+"\n") {
				t.Errorf("report does not end with %q:\n%s", tc.summary, out.String())
			}
			i := slices.IndexFunc(blocks, func(b block) bool { return b.base == "BenchmarkCallTool/stdio" })
			if i < 0 || !slices.Equal(blocks[i].rows, tc.stdio) {
				t.Errorf("report:\n%s\nBenchmarkCallTool/stdio rows %+v, want %+v", out.String(), blocks, tc.stdio)
			}
			// Every target is printed: each ratio target's pair and each
			// target's benchmark has a block.
			for _, rt := range ratioTargets() {
				if !strings.Contains(out.String(), "\n"+rt.base+" (median of runs)\n") {
					t.Errorf("report lacks %s:\n%s", rt.base, out.String())
				}
			}
			for _, tg := range targets() {
				if !strings.Contains(out.String(), "\n"+tg.bench+" (median of runs): ") {
					t.Errorf("report lacks %s:\n%s", tg.bench, out.String())
				}
			}
		})
	}
}

func TestRunReadError(t *testing.T) {
	errRead := errors.New("read failed")
	var out bytes.Buffer
	err := run(iotest.ErrReader(errRead), &out)
	if !errors.Is(err, errRead) {
		t.Errorf("run error = %v, want the reader's error", err)
	}
}

func TestMedian(t *testing.T) {
	cases := []struct {
		in   []float64
		want float64
	}{
		{nil, 0},
		{[]float64{7}, 7},
		{[]float64{3, 1, 2}, 2},
		{[]float64{4, 1, 3, 2}, 2.5},
		{[]float64{5, 5, 1, 9, 5}, 5},
	}
	for _, tc := range cases {
		in := slices.Clone(tc.in)
		if got := median(in); got != tc.want {
			t.Errorf("median(%v) = %v, want %v", tc.in, got, tc.want)
		}
		if !slices.Equal(in, tc.in) {
			t.Errorf("median reordered its argument: %v", in)
		}
	}
}

// The OpenTelemetry benchmark's sub-benchmarks pair runtime with noop and
// with sdk, each under its own heading, beside direct/runtime.
func TestRunPairsOTel(t *testing.T) {
	in := header +
		"BenchmarkCallToolOTel/inmemory/direct-2 \t 3000\t 1000 ns/op\t 100 allocs/op\n" +
		"BenchmarkCallToolOTel/inmemory/runtime-2 \t 3000\t 1100 ns/op\t 120 allocs/op\n" +
		"BenchmarkCallToolOTel/inmemory/noop-2 \t 3000\t 1210 ns/op\t 132 allocs/op\n" +
		"BenchmarkCallToolOTel/inmemory/sdk-2 \t 3000\t 1320 ns/op\t 150 allocs/op\n" + footer
	out := report(t, in)
	for _, want := range []string{"runtime           noop", "runtime            sdk", "1.100x", "1.200x", "1.250x"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if n := strings.Count(out, "BenchmarkCallToolOTel/inmemory (median of runs)"); n != 3 {
		t.Errorf("%d headings, want 3 (direct/runtime, runtime/noop, runtime/sdk):\n%s", n, out)
	}
}
