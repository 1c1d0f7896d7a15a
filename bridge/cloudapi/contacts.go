package cloudapi

import (
	"strings"
)

// cloudCard is one contact of Cloud's contacts message.
type cloudCard struct {
	Name struct {
		FormattedName string `json:"formatted_name"`
		FirstName     string `json:"first_name"`
		LastName      string `json:"last_name"`
	} `json:"name"`
	Phones []struct {
		Phone string `json:"phone"`
		WaID  string `json:"wa_id"`
		Type  string `json:"type"`
	} `json:"phones"`
	Emails []struct {
		Email string `json:"email"`
		Type  string `json:"type"`
	} `json:"emails"`
	Org *struct {
		Company string `json:"company"`
	} `json:"org"`
}

// vcardOf writes the one contact of a Cloud contacts message as a vCard;
// the bridge's own validation of vCards then applies to it. A message of
// several contacts is refused: the bridge sends one card a message.
func vcardOf(cards []cloudCard) (string, error) {
	switch {
	case len(cards) == 0:
		return "", invalidParam("missing_vcard", "a contacts message needs contacts[0]")
	case len(cards) > 1:
		return "", invalidParam("too_many_contacts", "this bridge sends one contact a message; send each in its own")
	}
	c := cards[0]
	name := c.Name.FormattedName
	if name == "" {
		name = strings.TrimSpace(c.Name.FirstName + " " + c.Name.LastName)
	}
	var b strings.Builder
	b.WriteString("BEGIN:VCARD\nVERSION:3.0\n")
	b.WriteString("FN:" + vcardEscape(name) + "\n")
	b.WriteString("N:" + vcardEscape(c.Name.LastName) + ";" + vcardEscape(c.Name.FirstName) + ";;;\n")
	if c.Org != nil && c.Org.Company != "" {
		b.WriteString("ORG:" + vcardEscape(c.Org.Company) + "\n")
	}
	for _, p := range c.Phones {
		b.WriteString("TEL;type=" + vcardType(p.Type, "CELL"))
		if p.WaID != "" {
			b.WriteString(";waid=" + vcardEscape(p.WaID))
		}
		b.WriteString(":" + vcardEscape(p.Phone) + "\n")
	}
	for _, e := range c.Emails {
		b.WriteString("EMAIL;type=" + vcardType(e.Type, "INTERNET") + ":" + vcardEscape(e.Email) + "\n")
	}
	b.WriteString("END:VCARD")
	return b.String(), nil
}

// vcardEscape keeps a value on its line and its separators literal.
func vcardEscape(s string) string {
	return strings.NewReplacer("\\", "\\\\", "\n", "\\n", "\r", "", ";", "\\;", ",", "\\,").Replace(s)
}

// vcardType is a TEL or EMAIL type: letters only, def when none.
func vcardType(t, def string) string {
	t = strings.Map(func(r rune) rune {
		if (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') {
			return r
		}
		return -1
	}, t)
	if t == "" {
		return def
	}
	return strings.ToUpper(t)
}
