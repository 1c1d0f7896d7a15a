package bridge_test

import (
	"testing"

	"github.com/msgbridge/msgbridge/bridge"
)

// The table describes every outgoing type and nothing else.
func TestEveryMessageTypeHasAKind(t *testing.T) {
	for _, typ := range bridge.MessageTypes {
		if _, ok := typ.Kind(); !ok {
			t.Errorf("%s has no kind", typ)
		}
	}
	if _, ok := bridge.MessageType("sticker").Kind(); ok {
		t.Error("an unknown type has a kind")
	}
}

// What the API documents of each type: which carry a file, which take a
// text, which act on an earlier message, and the code of a missing part.
func TestMessageKinds(t *testing.T) {
	for _, c := range []struct {
		typ          bridge.MessageType
		file, action bool
		text         bool
		missing      string
	}{
		{bridge.TypeText, false, false, true, "missing_"},
		{bridge.TypeImage, true, false, true, "missing_file"},
		{bridge.TypeDocument, true, false, true, "missing_file"},
		{bridge.TypeVideo, true, false, true, "missing_file"},
		{bridge.TypeAudio, true, false, false, "missing_file"},
		{bridge.TypeLocation, false, false, false, "missing_location"},
		{bridge.TypeContact, false, false, false, "missing_vcard"},
		{bridge.TypeReaction, false, true, false, "missing_target"},
		{bridge.TypeEdit, false, true, true, "missing_target"},
		{bridge.TypeRevoke, false, true, false, "missing_target"},
	} {
		k, _ := c.typ.Kind()
		if c.typ.CarriesFile() != c.file || c.typ.IsAction() != c.action || k.Text != c.text ||
			k.Part.MissingCode() != c.missing {
			t.Errorf("%s: file %v, action %v, text %v, missing %s; want %v, %v, %v, %s", c.typ, c.typ.CarriesFile(),
				c.typ.IsAction(), k.Text, k.Part.MissingCode(), c.file, c.action, c.text, c.missing)
		}
	}
}
