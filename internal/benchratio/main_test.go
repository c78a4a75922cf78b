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

// parse reads run's report back: one block per pair, in output order.
func parse(t *testing.T, out string) []block {
	t.Helper()
	var blocks []block
	for line := range strings.Lines(out) {
		line = strings.TrimRight(line, "\n")
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
				{"allocs/op", "0", "0", "-", "-", "≤1.050 MISSING"},
				{"cpu-ns/op", "0", "0", "-", "-", "≤1.050 MISSING"},
				{"ns/op", "1000", "1100", "1.100x", "1.100–1.100x", ""},
				{"p50-ns", "0", "0", "-", "-", "≤1.050 MISSING"},
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
				{"allocs/op", "0", "0", "-", "-", "≤1.050 MISSING"},
				{"cpu-ns/op", "0", "0", "-", "-", "≤1.050 MISSING"},
				{"ns/op", "1050", "1155", "1.100x", "0.091–11.110x", ""},
				{"p50-ns", "0", "0", "-", "-", "≤1.050 MISSING"},
			}}},
		},
		{
			name: "a zero or missing direct metric has no ratio",
			in: header +
				"BenchmarkCallTool/stdio/direct-2 \t 2000\t 1000 ns/op\t       0 B/op\t       0 allocs/op\n" +
				"BenchmarkCallTool/stdio/runtime-2\t 2000\t 2000 ns/op\t      64 B/op\t       1 allocs/op\t 3.000 retries/op\n" +
				footer,
			want: []block{{"BenchmarkCallTool/stdio", []row{
				{"B/op", "0", "64", "-", "-", ""},
				{"allocs/op", "0", "1", "-", "-", "≤1.050 MISSING"},
				{"cpu-ns/op", "0", "0", "-", "-", "≤1.050 MISSING"},
				{"ns/op", "1000", "2000", "2.000x", "2.000–2.000x", ""},
				{"p50-ns", "0", "0", "-", "-", "≤1.050 MISSING"},
				{"retries/op", "0", "3", "-", "-", ""},
			}}},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			if err := run(strings.NewReader(tc.in), &out); err != nil {
				t.Fatalf("run: %v", err)
			}
			got := parse(t, out.String())
			if !slices.EqualFunc(got, tc.want, func(a, b block) bool { return a.base == b.base && slices.Equal(a.rows, b.rows) }) {
				t.Errorf("report:\n%s\nparsed %+v\nwant   %+v", out.String(), got, tc.want)
			}
		})
	}
}

// The report's exact layout, for the README and for eyes.
func TestRunLayout(t *testing.T) {
	var out bytes.Buffer
	if err := run(strings.NewReader(header+stdio3+footer), &out); err != nil {
		t.Fatalf("run: %v", err)
	}
	want := `
BenchmarkCallTool/stdio (median of runs)
  metric                   direct        runtime    ratio          spread target
  B/op                       1000           1200   1.200x    1.200–1.200x
  allocs/op                    10             12   1.200x    1.182–1.200x ≤1.050 MISSED
  cpu-ns/op                   500            525   1.050x    0.883–1.275x ≤1.050 met
  ns/op                      1000           1100   1.100x    0.909–1.444x
  p50-ns                      810            900   1.111x    1.073–1.136x ≤1.050 MISSED
`
	if out.String() != want {
		t.Errorf("report =\n%s\nwant\n%s", out.String(), want)
	}
}

func TestRunNoPairs(t *testing.T) {
	direct := stdio3[:strings.Index(stdio3, "BenchmarkCallTool/stdio/runtime")]
	runtime := stdio3[len(direct):]
	cases := []struct {
		name string
		in   string
	}{
		{"empty input", ""},
		{"no benchmarks", header + "PASS\n" + footer},
		{"direct only", header + direct + footer},
		{"runtime only", header + runtime + footer},
		{"direct and runtime of different transports", header + direct + rename(runtime, "inmemory") + footer},
		{"other benchmarks", header + "BenchmarkParseConfig-2 \t 500000\t 2345 ns/op\t 512 B/op\t 9 allocs/op\n" + footer},
		{"test failure output", "--- FAIL: TestCallTool (0.01s)\nFAIL\nexit status 1\nFAIL\tgithub.com/openprogram/mcpvisor/runtime\t0.1s\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			err := run(strings.NewReader(tc.in), &out)
			if err == nil || !strings.Contains(err.Error(), "no direct/runtime pairs") {
				t.Errorf("run error = %v, want one about missing pairs", err)
			}
			if out.Len() != 0 {
				t.Errorf("run printed %q with no pairs", out.String())
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
	var out bytes.Buffer
	if err := run(strings.NewReader(in), &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"runtime           noop", "runtime            sdk", "1.100x", "1.200x", "1.250x"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	if n := strings.Count(out.String(), "BenchmarkCallToolOTel/inmemory (median of runs)"); n != 3 {
		t.Errorf("%d headings, want 3 (direct/runtime, runtime/noop, runtime/sdk):\n%s", n, out.String())
	}
}
