package runtime

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/openprogram/mcpvisor/config"
)

// A host starts the runtime on its state dir, waits for tools to appear and
// calls one like a local function.
func Example() {
	dir, _ := os.MkdirTemp("", "example-")
	defer os.RemoveAll(dir)
	file := &config.File{}
	file.Put(config.Server{Name: "demo", Type: config.TypeLocal, Command: []string{demoBin, "serve"}, Enabled: true})
	_ = config.Store{Dir: func() (string, error) { return dir, nil }}.Save(file)

	rt, err := Start(context.Background(), Options{StateDir: dir})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer rt.Shutdown(context.Background())

	sub := rt.Registry().Subscribe()
	defer sub.Close()
	for len(rt.Tools()) == 0 {
		select {
		case <-sub.C:
		case <-time.After(30 * time.Second):
			fmt.Println("no tools:", rt.Status())
			return
		}
	}
	res, err := rt.CallTool(context.Background(), "demo__echo", map[string]any{"text": "hi"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(len(rt.Tools()), "tools;", "demo__echo says", res.Content[0].Text)
	// Output: 16 tools; demo__echo says hi
}
