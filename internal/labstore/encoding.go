package labstore

import (
	"bytes"
	"encoding/json"

	"sigs.k8s.io/yaml"
)

// An object file holds the object as indented JSON, which is YAML too (the
// files keep their .yaml names): every proxy of a lab reads the files that
// changed, and decoding YAML (converted to JSON first) costs about ten
// times what decoding the JSON does — at 100 nodes a Service of 1,000
// endpoints was seconds of the proxies' CPU. Files of older labs, in YAML,
// still read.

// encodeObject is the content of obj's object file.
func encodeObject(obj any) ([]byte, error) {
	data, err := json.MarshalIndent(obj, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(data, '\n'), nil
}

// decodeObject reads an object file's content into obj: as JSON when it
// is (what encodeObject writes), else as YAML.
func decodeObject(data []byte, obj any) error {
	if trimmed := bytes.TrimLeft(data, " \t\r\n"); len(trimmed) > 0 && trimmed[0] == '{' {
		return json.Unmarshal(data, obj)
	}
	return yaml.Unmarshal(data, obj)
}
