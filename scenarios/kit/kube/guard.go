package kube

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
)

// guarded returns a copy of cfg whose every request is checked against
// roles before it is sent, and whose 403 answers name the rule that
// grants the request (guardTransport). Exec's upgraded connections go
// through it too (client-go applies WrapTransport to them).
func guarded(cfg *rest.Config, roles []Role) *rest.Config {
	c := rest.CopyConfig(cfg)
	c.Wrap(func(next http.RoundTripper) http.RoundTripper { return &guardTransport{next: next, roles: roles} })
	return c
}

// guardTransport is the one place requests meet the RBAC table: a request
// no rule grants is refused here, before it is sent (the table, and so
// `svclab conformance rbac`, must list every call the suite makes); the
// message of a 403 from the API server is rewritten to say
// "forbidden: VERB RESOURCE in NAMESPACE" and which rule grants it, the
// answer staying a 403 Status (apierrors.IsForbidden holds).
type guardTransport struct {
	next  http.RoundTripper
	roles []Role
}

func (g *guardTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	req := requestAttributes(r.Method, r.URL.Path, r.URL.Query().Get("watch"))
	if req.NonResourcePath == "" {
		if _, ok := grants(g.roles, req); !ok {
			return nil, refused(req)
		}
	}
	resp, err := g.next.RoundTrip(r)
	if err != nil || resp.StatusCode != http.StatusForbidden || req.NonResourcePath != "" {
		return resp, err
	}
	return explainForbidden(resp, req, g.roles), nil
}

// refused is the guard's error for a request no rule grants. ConfigMaps
// are granted by name: the proxy's (Options.ProxyConfig) and the ones the
// suite knows; another one is most likely a proxy configuration to name
// with --proxy-config.
func refused(req apiRequest) error {
	if req.Resource == "configmaps" && req.Verb == "get" {
		return fmt.Errorf("%s: the suite reads only the ConfigMaps `svclab conformance rbac` grants by name; if it is the proxy's configuration, name it with --proxy-config %s/%s", req, req.Namespace, req.Name)
	}
	return fmt.Errorf("svclab's RBAC table (scenarios/kit/kube/rbac.go) has no rule for %s: add one there, so that `svclab conformance rbac` grants it", req)
}

// WrappedRoundTripper lets client-go see through the guard
// (k8s.io/apimachinery's net.RoundTripperWrapper).
func (g *guardTransport) WrappedRoundTripper() http.RoundTripper { return g.next }

// explainForbidden replaces the message of a 403 answer's Status by
// forbiddenMessage, keeping the server's own at its end.
func explainForbidden(resp *http.Response, req apiRequest, roles []Role) *http.Response {
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	// The Status comes in the negotiated encoding, protobuf or JSON.
	var status metav1.Status
	if _, _, err := scheme.Codecs.UniversalDeserializer().Decode(body, nil, &status); err != nil {
		status = metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}, Status: metav1.StatusFailure,
			Reason: metav1.StatusReasonForbidden, Code: http.StatusForbidden, Message: strings.TrimSpace(string(body))}
	}
	status.Message = forbiddenMessage(req, roles, status.Message)
	out, _ := json.Marshal(status) // a Status always marshals
	resp.Body = io.NopCloser(bytes.NewReader(out))
	resp.ContentLength = int64(len(out))
	resp.Header = resp.Header.Clone()
	resp.Header.Set("Content-Type", "application/json")
	resp.Header.Set("Content-Length", strconv.Itoa(len(out)))
	return resp
}

// forbiddenMessage is "forbidden: VERB RESOURCE in NAMESPACE: the Role
// that grants it; the API server said: …".
func forbiddenMessage(req apiRequest, roles []Role, server string) string {
	msg := "forbidden: " + req.String()
	if g, ok := grants(roles, req); ok {
		msg += ": " + g.String()
	} else {
		msg += ": no rule of `svclab conformance rbac` grants it"
	}
	if server != "" {
		msg += "; the API server said: " + server
	}
	return msg
}

// requestAttributes is what the API server's authorizer makes of a
// request (k8s.io/apiserver's RequestInfoFactory, for the paths the
// suite uses): /api/v1/… and /apis/GROUP/VERSION/…, namespaced or not,
// with a name and a subresource; GET is get with a name, else list (watch
// with watch=true); POST create, PUT update, PATCH patch, DELETE delete
// (deletecollection without a name). Exec is create whatever the method:
// SPDY posts, and the WebSocket's GET is authorized as create by current
// API servers (an older one's 403 makes exec fall back to SPDY). Other
// paths (discovery: /api, /apis, /version, /openapi) are non-resource.
func requestAttributes(method, path, watch string) apiRequest {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	i := slices.IndexFunc(parts, func(p string) bool { return p == "api" || p == "apis" })
	nonResource := apiRequest{Verb: strings.ToLower(method), NonResourcePath: path}
	if i < 0 {
		return nonResource
	}
	var req apiRequest
	rest := parts[i+1:]
	if parts[i] == "api" {
		if len(rest) < 2 { // /api, /api/v1
			return nonResource
		}
		rest = rest[1:]
	} else {
		if len(rest) < 3 { // /apis, /apis/GROUP, /apis/GROUP/VERSION
			return nonResource
		}
		req.Group, rest = rest[0], rest[2:]
	}
	if rest[0] == "namespaces" && len(rest) > 1 {
		req.Namespace = rest[1]
		if len(rest) > 2 && rest[2] != "status" && rest[2] != "finalize" {
			rest = rest[2:]
		} else { // the namespace itself
			req.Namespace = ""
		}
	}
	req.Resource = rest[0]
	if len(rest) > 1 {
		req.Name = rest[1]
	}
	if len(rest) > 2 {
		req.Subresource = rest[2]
	}
	if req.Resource == "namespaces" && req.Name != "" {
		// /api/v1/namespaces/NAME is the namespace NAME, cluster-scoped.
		req.Namespace = ""
	}
	switch method {
	case http.MethodGet, http.MethodHead:
		switch {
		case req.Name != "":
			req.Verb = "get"
		case watch == "true" || watch == "1":
			req.Verb = "watch"
		default:
			req.Verb = "list"
		}
	case http.MethodPost:
		req.Verb = "create"
	case http.MethodPut:
		req.Verb = "update"
	case http.MethodPatch:
		req.Verb = "patch"
	case http.MethodDelete:
		req.Verb = "delete"
		if req.Name == "" {
			req.Verb = "deletecollection"
		}
	default:
		req.Verb = strings.ToLower(method)
	}
	if req.Subresource == "exec" {
		req.Verb = "create"
	}
	return req
}
