package exampleserver

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The icon flood: a tool and a prompt, both named IconFloodName, each
// with IconFloodCount icons, of which the first is a 1 MiB data: URI and
// the second a URL that quotes the environment variable IconTokenEnv, as
// a careless server would. A client must bound and scrub them.
const (
	// IconFloodName names the tool and the prompt [Options.IconFlood]
	// registers.
	IconFloodName = "icons"
	// IconFloodCount is how many icons each of them has.
	IconFloodCount = 20
	// IconTokenEnv is the environment variable the second icon's URL
	// quotes.
	IconTokenEnv = "ICON_TOKEN"
	// IconFloodURL starts the second icon's URL; the token follows it.
	IconFloodURL = "https://icons.example/token.png?token="
)

// FloodIconURL is the URL of the icon flood's icon i (from 2 on).
func FloodIconURL(i int) string { return fmt.Sprintf("https://icons.example/%d.png", i) }

// floodIcons are the icon flood's icons, read when the server starts.
func floodIcons() []mcp.Icon {
	icons := []mcp.Icon{
		{Source: "data:image/png;base64," + strings.Repeat("A", 1<<20), MIMEType: "image/png"},
		{Source: IconFloodURL + os.Getenv(IconTokenEnv), MIMEType: "image/png"},
	}
	for i := 2; i < IconFloodCount; i++ {
		icons = append(icons, mcp.Icon{Source: FloodIconURL(i), MIMEType: "image/png"})
	}
	return icons
}

// addIconFlood registers the icon flood's tool and prompt.
func addIconFlood(srv *mcp.Server) {
	icons := floodIcons()
	srv.AddTool(&mcp.Tool{Name: IconFloodName, Description: "Has too many icons.", InputSchema: json.RawMessage(`{"type":"object"}`), Icons: icons},
		textTool("icons"))
	srv.AddPrompt(&mcp.Prompt{Name: IconFloodName, Description: "Has too many icons.", Icons: icons},
		func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{userMessage("icons")}}, nil
		})
}
