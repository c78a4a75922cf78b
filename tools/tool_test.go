package tools

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"testing"
)

func TestToolExecuteWithoutExecutorIsNotReady(t *testing.T) {
	cases := []struct {
		name string
		tool Tool
	}{
		{"zero tool", Tool{}},
		{"NewTool with nil executor", NewTool("srv__echo", "srv", "echo", "Echo.", json.RawMessage(`{"type":"object"}`), nil)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res, err := tc.tool.Execute(context.Background(), map[string]any{"x": 1})
			if !errors.Is(err, ErrNotReady) {
				t.Fatalf("Execute error = %v, want ErrNotReady", err)
			}
			if !reflect.DeepEqual(res, Result{}) {
				t.Errorf("Execute result = %+v, want zero Result", res)
			}
		})
	}
}

type ctxKey struct{}

func TestExecutorFuncPassesContextAndArgsThrough(t *testing.T) {
	wantErr := errors.New("boom")
	cases := []struct {
		name    string
		args    any
		result  Result
		err     error
		argsOK  func(got any) bool
		wantErr error
	}{
		{
			name:   "map args, text result",
			args:   map[string]any{"msg": "hi"},
			result: Result{Content: []Content{{Type: ContentText, Text: "hi"}}},
			argsOK: func(got any) bool { m, ok := got.(map[string]any); return ok && m["msg"] == "hi" },
		},
		{
			name:   "raw JSON args, error result",
			args:   json.RawMessage(`{"n":2}`),
			result: Result{IsError: true, Content: []Content{{Type: ContentText, Text: "bad n"}}, Details: map[string]any{"is_error": true}},
			argsOK: func(got any) bool { r, ok := got.(json.RawMessage); return ok && string(r) == `{"n":2}` },
		},
		{
			name:    "executor error is returned as is",
			args:    nil,
			err:     wantErr,
			argsOK:  func(got any) bool { return got == nil },
			wantErr: wantErr,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.WithValue(context.Background(), ctxKey{}, tc.name)
			calls := 0
			exec := ExecutorFunc(func(got context.Context, args any) (Result, error) {
				calls++
				if got.Value(ctxKey{}) != tc.name {
					t.Errorf("executor got a context without the caller's value")
				}
				if !tc.argsOK(args) {
					t.Errorf("executor got args %#v, want %#v", args, tc.args)
				}
				return tc.result, tc.err
			})
			tool := NewTool("srv__t", "srv", "t", "", nil, exec)

			res, err := tool.Execute(ctx, tc.args)
			if calls != 1 {
				t.Fatalf("executor called %d times, want 1", calls)
			}
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("Execute error = %v, want %v", err, tc.wantErr)
			}
			if !reflect.DeepEqual(res, tc.result) {
				t.Errorf("Execute result = %+v, want %+v", res, tc.result)
			}
		})
	}
}

func TestExecutorFuncSeesCancellation(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	tool := NewTool("srv__t", "srv", "t", "", nil, ExecutorFunc(func(ctx context.Context, _ any) (Result, error) {
		return Result{}, ctx.Err()
	}))
	if _, err := tool.Execute(ctx, nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("Execute error = %v, want context.Canceled", err)
	}
}

func TestNewToolFields(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"}}}`)
	tool := NewTool("docs__search", "docs", "search", "Search the docs.", schema, nil)
	want := Tool{Name: "docs__search", Server: "docs", OriginalName: "search", Description: "Search the docs.", InputSchema: schema, Visibility: DefaultVisibility()}
	if !reflect.DeepEqual(tool, want) {
		t.Errorf("NewTool = %+v, want %+v", tool, want)
	}
}

// The JSON forms are what the management API and hosts see; the executor
// never leaks into them.
func TestJSONShapes(t *testing.T) {
	cases := []struct {
		name string
		v    any
		want string
	}{
		{
			name: "tool",
			v: NewTool("docs__search", "docs", "search", "Search.", json.RawMessage(`{"type":"object"}`),
				ExecutorFunc(func(context.Context, any) (Result, error) { return Result{}, nil })),
			want: `{"name":"docs__search","server":"docs","original_name":"search","description":"Search.","input_schema":{"type":"object"},"visibility":["model","app"]}`,
		},
		{
			name: "text result",
			v:    Result{Content: []Content{{Type: ContentText, Text: "hello"}}},
			want: `{"content":[{"type":"text","text":"hello"}],"is_error":false}`,
		},
		{
			name: "image result with details",
			v: Result{
				Content: []Content{{Type: ContentImage, MIMEType: "image/png", Data: []byte{0x89, 'P', 'N', 'G'}}},
				IsError: true,
				Details: map[string]any{"is_error": true},
			},
			want: `{"content":[{"type":"image","mime_type":"image/png","data":"iVBORw=="}],"is_error":true,"details":{"is_error":true}}`,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := json.Marshal(tc.v)
			if err != nil {
				t.Fatalf("Marshal: %v", err)
			}
			if string(got) != tc.want {
				t.Errorf("Marshal =\n  %s\nwant\n  %s", got, tc.want)
			}
		})
	}
}

// ForModel and ForApp read the visibility, nil (a Tool literal) being the
// default.
func TestVisibility(t *testing.T) {
	for _, tc := range []struct {
		visibility      []string
		forModel, inApp bool
	}{
		{nil, true, true},
		{DefaultVisibility(), true, true},
		{[]string{VisibleToApp}, false, true},
		{[]string{VisibleToModel}, true, false},
		{[]string{}, false, false},
	} {
		tool := Tool{Visibility: tc.visibility}
		if tool.ForModel() != tc.forModel || tool.ForApp() != tc.inApp {
			t.Errorf("%#v: ForModel %v ForApp %v", tc.visibility, tool.ForModel(), tool.ForApp())
		}
	}
}
