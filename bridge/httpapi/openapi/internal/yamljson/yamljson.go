// Package yamljson converts the API description from YAML, as people
// write it, to JSON, as the bridge serves it. It runs at build time only
// (go generate), so the bridge links no YAML parser.
package yamljson

import (
	"bytes"
	"encoding/json"
	"fmt"

	"go.yaml.in/yaml/v3"
)

// Convert converts a YAML document to compact JSON, keeping the order of
// mapping keys (sigs.k8s.io/yaml would sort them; the docs page shows the
// document's order). Compact, as the bridge always served it: tools that
// order by source line (libopenapi's operations) see it as before.
func Convert(src []byte) ([]byte, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(src, &doc); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := writeJSON(&buf, &doc); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func writeJSON(buf *bytes.Buffer, n *yaml.Node) error {
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) != 1 {
			return fmt.Errorf("line %d: want one document", n.Line)
		}
		return writeJSON(buf, n.Content[0])
	case yaml.MappingNode:
		buf.WriteByte('{')
		for i := 0; i+1 < len(n.Content); i += 2 {
			if i > 0 {
				buf.WriteByte(',')
			}
			key, _ := json.Marshal(n.Content[i].Value) // a string: cannot fail
			buf.Write(key)
			buf.WriteByte(':')
			if err := writeJSON(buf, n.Content[i+1]); err != nil {
				return err
			}
		}
		buf.WriteByte('}')
	case yaml.AliasNode:
		// An anchor used twice (the webhooks' headers, which must stay out
		// of components: generators drop components no path uses).
		return writeJSON(buf, n.Alias)
	case yaml.SequenceNode:
		buf.WriteByte('[')
		for i, c := range n.Content {
			if i > 0 {
				buf.WriteByte(',')
			}
			if err := writeJSON(buf, c); err != nil {
				return err
			}
		}
		buf.WriteByte(']')
	case yaml.ScalarNode:
		return writeScalar(buf, n)
	default:
		return fmt.Errorf("line %d: node kind %d is not supported", n.Line, n.Kind)
	}
	return nil
}

func writeScalar(buf *bytes.Buffer, n *yaml.Node) error {
	var v any = n.Value
	switch n.ShortTag() {
	case "!!str", "!!timestamp", "!!binary":
	default:
		if err := n.Decode(&v); err != nil {
			return fmt.Errorf("line %d: %w", n.Line, err)
		}
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("line %d: %w", n.Line, err)
	}
	buf.Write(b)
	return nil
}
