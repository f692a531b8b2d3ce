package strictyaml

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// A jsonValue is one value of a JSON document: its field path with list
// indices (spec.nodes[0].name) and its first token (a literal or an opening
// delimiter).
type jsonValue struct {
	path  string
	token json.Token
}

// valueAt scans js for the values whose path without list indices is field
// and returns the last one that starts before offset.
func valueAt(js []byte, field string, offset int64) (jsonValue, bool) {
	type frame struct {
		array   bool
		index   int
		key     string
		haveKey bool // key is read ("" is a key too)
		path    string
	}
	var (
		stack []*frame
		found jsonValue
		ok    bool
	)
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.UseNumber()
	for {
		start := dec.InputOffset()
		tok, err := dec.Token()
		if err != nil {
			return found, ok
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if d, isDelim := tok.(json.Delim); isDelim && (d == '}' || d == ']') {
			stack = stack[:len(stack)-1]
			continue
		}
		if top != nil && !top.array && !top.haveKey {
			top.key, top.haveKey = tok.(string) // an object key
			continue
		}
		path, plain := "", ""
		switch {
		case top == nil:
		case top.array:
			path, plain = fmt.Sprintf("%s[%d]", top.path, top.index), stripIndices(top.path)
			top.index++
		default:
			path, plain = join(top.path, top.key), join(stripIndices(top.path), top.key)
			top.key, top.haveKey = "", false
		}
		if plain == field && start < offset {
			found, ok = jsonValue{path: path, token: tok}, true
		}
		if d, isDelim := tok.(json.Delim); isDelim {
			stack = append(stack, &frame{array: d == '[', path: path})
		}
	}
}

// stripIndices drops the list indices from a field path, as encoding/json
// names fields: spec.nodes[1].name becomes spec.nodes.name.
func stripIndices(path string) string {
	var b strings.Builder
	inIndex := false
	for _, r := range path {
		switch {
		case r == '[':
			inIndex = true
		case r == ']':
			inIndex = false
		case !inIndex:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func describe(tok json.Token) string {
	switch x := tok.(type) {
	case json.Delim:
		if x == '[' {
			return "a list"
		}
		return "a mapping"
	case string:
		return fmt.Sprintf("the string %q", x)
	case json.Number:
		return "the number " + x.String()
	case bool:
		return fmt.Sprintf("the boolean %t", x)
	default:
		return fmt.Sprintf("%T", tok)
	}
}
