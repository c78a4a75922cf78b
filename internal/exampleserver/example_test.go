package exampleserver_test

import (
	"context"
	"fmt"
	"log"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/openprogram/mcpvisor/internal/exampleserver"
)

// Example connects a client to the example server in memory, as tests and
// benchmarks do, and calls a tool.
func Example() {
	ctx := context.Background()
	serverT, clientT := mcp.NewInMemoryTransports()
	ss, err := exampleserver.NewServer(exampleserver.Options{}).Connect(ctx, serverT, nil)
	if err != nil {
		log.Fatal(err)
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "example-client", Version: "0"}, nil)
	cs, err := client.Connect(ctx, clientT, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer ss.Wait()
	defer cs.Close()

	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "add", Arguments: map[string]any{"a": 2, "b": 3}})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(cs.InitializeResult().ServerInfo.Name)
	fmt.Println(res.Content[0].(*mcp.TextContent).Text)
	// Output:
	// mcpvisor-example
	// 5
}
