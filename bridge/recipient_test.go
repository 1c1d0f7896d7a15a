package bridge

import (
	"errors"
	"testing"
)

func TestParseRecipient(t *testing.T) {
	for _, c := range []struct {
		in   string
		want Recipient
	}{
		// Phone numbers with their country code, as bridge/phone accepted them.
		{"4915112345678", Recipient{RecipientPhone, "4915112345678"}},
		{"+4915112345678", Recipient{RecipientPhone, "4915112345678"}},
		{"+49 151-1234 5678", Recipient{RecipientPhone, "4915112345678"}},
		{"  +1 555 123 4567 ", Recipient{RecipientPhone, "15551234567"}},
		{"1234567", Recipient{RecipientPhone, "1234567"}},
		{"123456789012345", Recipient{RecipientPhone, "123456789012345"}},
		// A user's JID.
		{"4915112345678@s.whatsapp.net", Recipient{RecipientPhone, "4915112345678"}},
		// Groups: digits, or the legacy creator-timestamp form.
		{"120363025246125486@g.us", Recipient{RecipientGroup, "120363025246125486"}},
		{"4915112345678-1609459200@g.us", Recipient{RecipientGroup, "4915112345678-1609459200"}},
		// A hidden number's LID.
		{"123456789012345@lid", Recipient{RecipientLID, "123456789012345"}},
	} {
		got, err := ParseRecipient(c.in)
		if err != nil || got != c.want {
			t.Errorf("ParseRecipient(%q) = %+v, %v; want %+v", c.in, got, err, c.want)
		}
	}
	for _, in := range []string{
		// Numbers bridge/phone refused.
		"", "+", "123456", "1234567890123456", "0151123456", "++4915112345678", "49151a2345678",
		"49(151)12345678", "49.151.1234", "٤٩١٥١١٢٣٤٥٦٧٨", "49151\n12345678",
		// Separators only between digits, one at a time.
		"-4915112345678", "4915112345678-", "49151--12345678", "49151 -12345678",
		// Groups bridge/phone refused.
		"@g.us", "abc@g.us", "1-2-3@g.us", "-1@g.us", "123@g.us.evil", "1-@g.us",
		// And a leading zero in a group id.
		"0123@g.us",
		// JIDs of other servers or malformed ones.
		"123@s.whatsapp.net", "49151a2345678@s.whatsapp.net", "@lid", "12a@lid", "4915112345678@broadcast",
	} {
		if got, err := ParseRecipient(in); !errors.Is(err, ErrInvalidRecipient) {
			t.Errorf("ParseRecipient(%q) = %+v, %v; want ErrInvalidRecipient", in, got, err)
		}
	}
}

func TestInvalidRecipientIsTheAPIsError(t *testing.T) {
	_, err := ParseRecipient("nope")
	if e := ErrorOf(err); e.Kind != KindInvalid || e.Code != "invalid_number" || e.Message == "" {
		t.Errorf("error %+v", e)
	}
}

func TestNormalizePhone(t *testing.T) {
	for in, want := range map[string]string{
		"4915112345678":      "4915112345678",
		"+49 151-1234 5678":  "4915112345678",
		"  +1 555 123 4567 ": "15551234567",
	} {
		if got, err := NormalizePhone(in); err != nil || got != want {
			t.Errorf("NormalizePhone(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	// A pairing code goes to a phone: a JID is not a number.
	for _, in := range []string{"4915112345678@s.whatsapp.net", "120363025246125486@g.us", "0151123456", ""} {
		if got, err := NormalizePhone(in); !errors.Is(err, ErrInvalidRecipient) {
			t.Errorf("NormalizePhone(%q) = %q, %v; want ErrInvalidRecipient", in, got, err)
		}
	}
}

func TestRecipientJIDAndString(t *testing.T) {
	for _, c := range []struct {
		r         Recipient
		jid, text string
	}{
		{Recipient{RecipientPhone, "4915112345678"}, "4915112345678@s.whatsapp.net", "4915112345678"},
		{Recipient{RecipientGroup, "120363025246125486"}, "120363025246125486@g.us", "120363025246125486@g.us"},
		{Recipient{RecipientLID, "123456789"}, "123456789@lid", "123456789@lid"},
		{Recipient{}, "", ""},
	} {
		if c.r.JID() != c.jid || c.r.String() != c.text {
			t.Errorf("%+v: JID %q, String %q; want %q, %q", c.r, c.r.JID(), c.r.String(), c.jid, c.text)
		}
		if c.r.IsZero() {
			continue
		}
		back, err := RecipientFromJID(c.jid)
		if err != nil || back != c.r {
			t.Errorf("RecipientFromJID(%q) = %+v, %v; want %+v", c.jid, back, err, c.r)
		}
	}
}

func TestRecipientFromJID(t *testing.T) {
	for in, want := range map[string]Recipient{
		"4915112345678:3@s.whatsapp.net":   {RecipientPhone, "4915112345678"}, // a device of the user
		"4915112345678.0:1@s.whatsapp.net": {RecipientPhone, "4915112345678"},
		"1-2@g.us":                         {RecipientGroup, "1-2"},
		"555:2@lid":                        {RecipientLID, "555"},
	} {
		if got, err := RecipientFromJID(in); err != nil || got != want {
			t.Errorf("RecipientFromJID(%q) = %+v, %v; want %+v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "4915112345678", "x@s.whatsapp.net", "1@broadcast", "1:2@g.us"} {
		if got, err := RecipientFromJID(in); !errors.Is(err, ErrInvalidRecipient) {
			t.Errorf("RecipientFromJID(%q) = %+v, %v; want ErrInvalidRecipient", in, got, err)
		}
	}
}

// FuzzNormalizePhone: never panics; what it accepts is 7-15 ASCII digits
// not starting with 0, and normalising that again gives the same result.
func FuzzNormalizePhone(f *testing.F) {
	for _, s := range []string{"+49 151-1234 5678", "", "0", "12345678901234567890", "+-", "١٢٣٤٥٦٧"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		got, err := NormalizePhone(in)
		if err != nil {
			return
		}
		if !plainDigits(got, minPhoneDigits, maxPhoneDigits) || got[0] == '0' {
			t.Fatalf("NormalizePhone(%q) = %q", in, got)
		}
		if again, err := NormalizePhone(got); err != nil || again != got {
			t.Fatalf("not idempotent: %q -> %q -> %q, %v", in, got, again, err)
		}
	})
}

// FuzzParseRecipient: what is accepted has a JID that parses back to the
// same recipient, so a stored recipient is the one the client named.
func FuzzParseRecipient(f *testing.F) {
	for _, s := range []string{"120363025246125486@g.us", "1-2@g.us", "+49 151-1234 5678", "1@lid", "4915112345678@s.whatsapp.net", "120363025246125486@newsletter", "0@newsletter"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		r, err := ParseRecipient(in)
		if err != nil {
			return
		}
		back, err := RecipientFromJID(r.JID())
		if err != nil || back != r {
			t.Fatalf("ParseRecipient(%q) = %+v; its JID %q reads back as %+v, %v", in, r, r.JID(), back, err)
		}
		if again, err := ParseRecipient(r.String()); err != nil || again != r {
			t.Fatalf("ParseRecipient(%q) = %+v; its String %q parses as %+v, %v", in, r, r.String(), again, err)
		}
	})
}
