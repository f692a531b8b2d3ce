package strictyaml

import "testing"

type testDoc struct {
	Kind    string `json:"kind"`
	Count   int    `json:"count"`
	Enabled bool   `json:"enabled"`
	Items   []struct {
		Name string `json:"name"`
	} `json:"items"`
	Set string `json:"-"`
}

var testFormat = Format{Prefix: "test", Kind: "Doc", Noun: "doc file", SecondDocumentHint: " (one per file)", MaxBytes: 64}

func TestDecodeErrorsNameFileAndField(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", `test f.yaml: empty file: expected a Doc document`},
		{"# only a comment\n", `test f.yaml: empty file: expected a Doc document`},
		{"kind: a\n---\nkind: b\n", `test f.yaml: document 2: a doc file holds one Doc: this second document would be ignored (one per file)`},
		{"count: many\n", `test f.yaml: count: expected a whole number, got the string "many"`},
		{"enabled: 3\n", `test f.yaml: enabled: expected true or false, got the number 3`},
		{"kind: 7\n", `test f.yaml: kind: expected a string, got the number 7 (quote it)`},
		{"items: [{name: a}, {nam: b}]\n", `test f.yaml: items[1].nam: unknown field (known fields here: name)`},
		{"set: x\n", `test f.yaml: set: unknown field (known fields here: kind, count, enabled, items)`},
		{"items: {name: a}\n", `test f.yaml: items: expected a list, got a mapping`},
		{"kind: a\nkind: b\n", `test f.yaml: invalid YAML: line 2: key "kind" already set in map`},
		{"kind: " + string(make([]byte, 80)) + "\n", `test f.yaml: larger than 64 bytes: not a doc file`},
		// An empty key is a key: finding the wrong value's path once
		// took the value after it for a key (and panicked on a null).
		{`[{""}]`, `test f.yaml: (document): expected a mapping, got a list`},
		{`{"": 1, "count": "x"}`, `test f.yaml: count: expected a whole number, got the string "x"`},
	} {
		_, err := Decode[testDoc](testFormat, []byte(tc.in), "f.yaml")
		if err == nil || err.Error() != tc.want {
			t.Errorf("Decode(%q) = %v\nwant %s", tc.in, err, tc.want)
		}
	}
	d, err := Decode[testDoc](testFormat, []byte("kind: a\ncount: 2\nitems: [{name: x}]\n"), "f.yaml")
	if err != nil || d.Kind != "a" || d.Count != 2 || len(d.Items) != 1 || d.Items[0].Name != "x" {
		t.Errorf("Decode = %+v, %v", d, err)
	}
}
