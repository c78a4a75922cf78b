package main

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/openprogram/mcpvisor/config"
	"github.com/openprogram/mcpvisor/runtime"
)

// scenario is what the client does for one conformance scenario. By the
// time run is called the server is ready and its tools are registered.
type scenario struct {
	// auth configures the server's auth from the context; nil: none.
	auth func(conformanceContext) *config.Auth
	// elicit answers elicitation requests; nil: the runtime declines them.
	elicit func(ctx context.Context, req runtime.ElicitationRequest) (runtime.ElicitationResult, error)
	run    func(context.Context, *client, conformanceContext) error
}

// scenarios mirror the go-sdk's own conformance client
// (conformance/everything-client), scenario for scenario.
var scenarios = map[string]scenario{
	// Connecting initializes and lists the tools.
	"initialize":       {run: connectOnly},
	"request-metadata": {run: connectOnly},
	// The runtime never fetches a $ref: listing is the whole test.
	"json-schema-ref-no-deref": {run: connectOnly},

	"tools_call": {run: func(ctx context.Context, c *client, _ conformanceContext) error {
		return c.call(ctx, "add_numbers", map[string]any{"a": 5, "b": 3})
	}},
	"elicitation-sep1034-client-defaults": {
		// Accepting with nothing filled in makes the SDK apply the
		// schema's defaults, which is what the scenario checks.
		elicit: acceptWith(map[string]any{}),
		run: func(ctx context.Context, c *client, _ conformanceContext) error {
			return c.call(ctx, "test_client_elicitation_defaults", nil)
		},
	},
	"sse-retry": {run: func(ctx context.Context, c *client, _ conformanceContext) error {
		return c.call(ctx, "test_reconnection", nil)
	}},
	"json-schema-2020-12-preservation": {run: func(ctx context.Context, c *client, _ conformanceContext) error {
		focal, err := c.tool("json_schema_2020_12_tool")
		if err != nil {
			return err
		}
		// Echo the schema exactly as the registry holds it, so the
		// referee sees which keywords survived.
		return c.call(ctx, "json_schema_echo", map[string]any{"schema": focal.InputSchema})
	}},
	"sep-2322-client-request-state": {
		elicit: acceptWith(map[string]any{"confirmed": true}),
		run: func(ctx context.Context, c *client, _ conformanceContext) error {
			// Some of these are meant to be refused by the client.
			for _, name := range []string{"test_mrtr_echo_state", "test_mrtr_no_state", "test_mrtr_unrelated", "test_mrtr_no_result_type"} {
				c.callLogged(ctx, name, nil)
			}
			return nil
		},
	},
	// The runtime exposes tools only (no resources or prompts yet), so
	// only tools/list and tools/call carry the standard headers here.
	// One request of each verb the runtime makes: a tool call, and, through
	// the resource and prompt tools, resources/list, resources/read,
	// prompts/list and prompts/get.
	"http-standard-headers": {run: standardHeaders},
	"http-custom-headers": {run: func(ctx context.Context, c *client, cc conformanceContext) error {
		for _, call := range cc.ToolCalls {
			c.callLogged(ctx, call.Name, call.Arguments)
		}
		return nil
	}},
	// The SDK drops the tools whose x-mcp-header annotations are invalid
	// when it lists them; every tool left is called.
	"http-invalid-tool-headers": {run: func(ctx context.Context, c *client, _ conformanceContext) error {
		for _, t := range c.tools() {
			c.callLogged(ctx, t.OriginalName, map[string]any{"region": "us-west1"})
		}
		return nil
	}},

	"auth/client-credentials-basic": {auth: clientCredentials, run: listAndCallTestTool},
	"auth/client-credentials-jwt":   {auth: clientCredentials, run: listAndCallTestTool},
}

// authCodeScenarios log in with the authorization code flow, through the
// runtime's OpenURL and loopback callback.
var authCodeScenarios = []string{
	"auth/2025-03-26-oauth-endpoint-fallback",
	"auth/2025-03-26-oauth-metadata-backcompat",
	"auth/authorization-server-migration",
	"auth/basic-cimd",
	"auth/iss-normalized",
	"auth/iss-not-advertised",
	"auth/iss-supported",
	"auth/iss-supported-missing",
	"auth/iss-unexpected",
	"auth/iss-wrong-issuer",
	"auth/metadata-default",
	"auth/metadata-issuer-mismatch",
	"auth/metadata-var1",
	"auth/metadata-var2",
	"auth/metadata-var3",
	"auth/offline-access-not-supported",
	"auth/offline-access-scope",
	"auth/pre-registration",
	"auth/resource-mismatch",
	"auth/scope-from-scopes-supported",
	"auth/scope-from-www-authenticate",
	"auth/scope-omitted-when-undefined",
	"auth/scope-retry-limit",
	"auth/scope-step-up",
	"auth/token-endpoint-auth-basic",
	"auth/token-endpoint-auth-none",
	"auth/token-endpoint-auth-post",
	// Extensions the runtime does not implement (DPoP, enterprise-managed
	// authorization, workload identity federation): tried with the plain
	// flow, expected to fail (conformance-baseline.yml).
	"auth/dpop",
	"auth/dpop-nonce",
	"auth/enterprise-managed-authorization",
	"auth/wif-jwt-bearer",
}

func init() {
	for _, name := range authCodeScenarios {
		scenarios[name] = scenario{auth: authorizationCode, run: listAndCallTestTool}
	}
}

// clientMetadataURL is the client id metadata document the suite's
// authorization servers accept.
const clientMetadataURL = "https://conformance-test.local/client-metadata.json"

func authorizationCode(cc conformanceContext) *config.Auth {
	a := &config.Auth{Kind: config.AuthOAuth, ClientMetadataURL: clientMetadataURL}
	if cc.ClientID != "" && cc.ClientSecret != "" { // pre-registration
		a.ClientID, a.ClientSecret = cc.ClientID, cc.ClientSecret
	}
	return a
}

func clientCredentials(cc conformanceContext) *config.Auth {
	a := &config.Auth{Kind: config.AuthClientCredentials, ClientID: cc.ClientID}
	if cc.PrivateKeyPEM != "" {
		a.PrivateKey, a.SigningAlg = cc.PrivateKeyPEM, cc.SigningAlgorithm
	} else {
		a.ClientSecret = cc.ClientSecret
	}
	return a
}

// connectOnly: connecting (initialize, tools/list) is the scenario.
func connectOnly(context.Context, *client, conformanceContext) error { return nil }

// listAndCallTestTool: the auth scenarios guard tools/list (already done
// by the connect) and tools/call.
func listAndCallTestTool(ctx context.Context, c *client, _ conformanceContext) error {
	return c.call(ctx, "test-tool", nil)
}

func acceptWith(content map[string]any) func(context.Context, runtime.ElicitationRequest) (runtime.ElicitationResult, error) {
	return func(context.Context, runtime.ElicitationRequest) (runtime.ElicitationResult, error) {
		return runtime.ElicitationResult{Action: "accept", Content: maps.Clone(content)}, nil
	}
}

// scenarioList is the usage text's list of scenarios.
func scenarioList() string {
	names := slices.Sorted(maps.Keys(scenarios))
	return fmt.Sprintf("scenarios:\n  %s\n", strings.Join(names, "\n  "))
}

// metaTools are the runtime's resource and prompt tools of a server.
var metaTools = map[string]bool{"list_resources": true, "read_resource": true, "list_prompts": true, "get_prompt": true}

func standardHeaders(ctx context.Context, c *client, _ conformanceContext) error {
	var first string
	for _, t := range c.tools() {
		if !metaTools[t.OriginalName] {
			first = t.OriginalName
			break
		}
	}
	if first == "" {
		return errNoTools
	}
	c.callLogged(ctx, first, nil)
	var resources struct {
		Resources []struct{ URI string }
	}
	if c.callJSON(ctx, "list_resources", nil, &resources) && len(resources.Resources) > 0 {
		c.callLogged(ctx, "read_resource", map[string]any{"uri": resources.Resources[0].URI})
	}
	var prompts struct {
		Prompts []struct{ Name string }
	}
	if c.callJSON(ctx, "list_prompts", nil, &prompts) && len(prompts.Prompts) > 0 {
		c.callLogged(ctx, "get_prompt", map[string]any{"name": prompts.Prompts[0].Name, "arguments": map[string]any{}})
	}
	return nil
}
