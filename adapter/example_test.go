package adapter_test

import (
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/openprogram/mcpvisor/adapter"
)

func ExampleToolName() {
	fmt.Println(adapter.ToolName("drawio", "open_drawio_xml"))
	fmt.Println(adapter.ToolName("my.server", "get weather"))
	// Output:
	// drawio__open_drawio_xml
	// my_server__get_weather
}

func ExampleConvertResult() {
	res := adapter.ConvertResult(&mcp.CallToolResult{
		Content: []mcp.Content{
			&mcp.TextContent{Text: "saved"},
			&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "file:///out.xml", Text: "<mxfile>…</mxfile>"}},
		},
		StructuredContent: map[string]any{"path": "/out.xml"},
	})
	b, _ := json.Marshal(res)
	fmt.Println(string(b))
	// Output:
	// {"content":[{"type":"text","text":"saved"},{"type":"text","text":"[resource: file:///out.xml]"}],"structured_content":{"path":"/out.xml"},"is_error":false,"details":{"embedded_resources":[{"uri":"file:///out.xml"}]}}
}
