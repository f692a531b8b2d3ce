// Package strictyaml decodes svclab's own file formats (lab files, lessons)
// the way the API server decodes a manifest: one YAML document, bounded in
// size, converted to JSON and decoded with sigs.k8s.io/json's strict
// decoding, so that an unknown field or a value of the wrong kind is one
// error naming the file and the field path.
package strictyaml
