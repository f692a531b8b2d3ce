package nodeimage

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/svclab/svclab/internal/cmdrun"
)

// moduleDir downloads (or finds in the module cache) mod@version and
// returns its directory.
func moduleDir(ctx context.Context, mod, version string) (string, error) {
	goBin, err := goBinary()
	if err != nil {
		return "", err
	}
	out, err := cmdrun.Command(goBin, "mod", "download", "-json", mod+"@"+version).WithEnv("GOTOOLCHAIN=local", "GOFLAGS=").Output(ctx)
	if err != nil {
		return "", err
	}
	return jsonField(out, "Dir")
}

// jsonField reads one string field of `go mod download -json`'s output.
func jsonField(out []byte, field string) (string, error) {
	var m map[string]any
	if err := json.Unmarshal(out, &m); err != nil {
		return "", fmt.Errorf("go mod download -json: %w", err)
	}
	if e, ok := m["Error"].(string); ok && e != "" {
		return "", fmt.Errorf("go mod download: %s", e)
	}
	v, ok := m[field].(string)
	if !ok || v == "" {
		return "", fmt.Errorf("go mod download -json: no %s in %s", field, out)
	}
	return v, nil
}
