package binding

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/openprogram/mcpvisor/tools"
)

// read_resource passes an audio blob to the model as an audio block, as
// it does an image; one over the media cap (the default 5 MiB) is left
// out, with a line saying so.
func TestReadResourceMedia(t *testing.T) {
	clip, big := []byte("RIFF0000WAVE"), bytes.Repeat([]byte{1}, 5<<20+1) // over the bound images have
	srv := mcp.NewServer(&mcp.Implementation{Name: "media", Version: "1"}, nil)
	for uri, c := range map[string]*mcp.ResourceContents{
		"media://clip":  {MIMEType: "audio/wav", Blob: clip},
		"media://big":   {MIMEType: "audio/mpeg", Blob: big},
		"media://image": {MIMEType: "image/png", Blob: clip},
	} {
		c.URI = uri
		srv.AddResource(&mcp.Resource{URI: uri, Name: uri}, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{c}}, nil
		})
	}
	conn := dialServer(t, srv, nil)
	for uri, want := range map[string]tools.Content{
		"media://clip":  {Type: tools.ContentAudio, MIMEType: "audio/wav", Data: clip},
		"media://image": {Type: tools.ContentImage, MIMEType: "image/png", Data: clip},
	} {
		res, _, err := readResource(t.Context(), conn, map[string]any{"uri": uri})
		if err != nil || len(res.Content) != 1 {
			t.Fatalf("read_resource %s: %+v, %v", uri, res, err)
		}
		if got := res.Content[0]; got.Type != want.Type || got.MIMEType != want.MIMEType || !bytes.Equal(got.Data, want.Data) {
			t.Errorf("read_resource %s = %s %s %q, want %s %s %q", uri, got.Type, got.MIMEType, got.Data, want.Type, want.MIMEType, want.Data)
		}
	}
	b := New("media", slog.New(slog.DiscardHandler))
	b.Publish(conn)
	res, err := b.metaExecutor(resourceTools[1], b.currentPolicy())(t.Context(), map[string]any{"uri": "media://big"})
	if err != nil || len(res.Content) != 1 || res.Content[0].Type != tools.ContentText ||
		!strings.Contains(res.Content[0].Text, "1 image/audio block(s) left out, 0 of 5242881 bytes shown; max_media_bytes=5242880") {
		t.Errorf("read_resource of a big clip = %+v, %v; want a line saying it is left out", res, err)
	}
}
