package whatsapp

import (
	"testing"

	"github.com/msgbridge/msgbridge/bridge"
	"github.com/msgbridge/msgbridge/internal/testutil"
)

// A contact's profile comes from WhatsApp once (about text, picture id and
// URL), then from memory within the budget; the contact's change of about
// text or picture, which WhatsApp announces, is seen at the next question.
func TestContactProfile(t *testing.T) {
	testutil.SkipIfShort(t, "simulator session")
	sim, _, _, book := linkedWithBlocks(t, 2)
	ctx := waitCtx(t)
	alice := sim.Contact("4915100000002", "Alice")
	alice.SetAbout("Hey there")
	pictureID := alice.SetPicture(false)
	who := bridge.PhoneRecipient(alice.Number())

	p, err := book.Profile(ctx, who)
	if err != nil {
		t.Fatal(err)
	}
	if p.About != "Hey there" || p.PictureID != pictureID || p.PictureURL == "" || p.PictureHidden || p.Business != nil {
		t.Fatalf("profile %+v, want about and picture %s", p, pictureID)
	}
	again, err := book.Profile(ctx, who)
	if err != nil || again.FetchedAt != p.FetchedAt {
		t.Errorf("second answer %+v %v, want the kept one", again, err)
	}

	alice.SetAbout("On holiday")
	alice.SetPicture(true)
	waitFor(t, "the changes forget the kept profile", func() bool {
		_, kept := book.m.cachedProfile(who)
		return !kept
	})
	p, err = book.Profile(ctx, who)
	if err != nil || p.About != "On holiday" || p.PictureID != "" || p.PictureURL != "" {
		t.Errorf("after the changes %+v %v", p, err)
	}
	// The burst (2) is spent: an uncached contact waits for CHECK_RATE.
	_, err = book.Profile(ctx, bridge.PhoneRecipient(sim.Contact("4915100000003", "Bob").Number()))
	if !isCode(err, bridge.CodeCheckRateLimited) {
		t.Errorf("third question: %v, want check_rate_limited", err)
	}
}

// The account's own about text and picture change on WhatsApp (the phone's
// profile has them, a contact hears of them) and read back; a picture that
// is no JPEG is refused by WhatsApp, and the privacy settings are read.
func TestOwnProfile(t *testing.T) {
	testutil.SkipIfShort(t, "simulator session")
	sim, _, _, book := linkedWithBlocks(t, 10)
	ctx := waitCtx(t)
	phone := sim.Phone(account)

	if err := book.SetAbout(ctx, "Open 9-17"); err != nil {
		t.Fatal(err)
	}
	jpeg := []byte{0xFF, 0xD8, 0xFF, 0xE0, 'J', 'F', 'I', 'F'}
	if err := book.SetPicture(ctx, jpeg); err != nil {
		t.Fatal(err)
	}
	if phone.About() != "Open 9-17" || phone.Picture() == "" {
		t.Fatalf("the phone's profile: about %q, picture %q", phone.About(), phone.Picture())
	}
	p, err := book.OwnProfile(ctx)
	if err != nil || p.About != "Open 9-17" || p.PictureID != phone.Picture() || p.Contact != bridge.PhoneRecipient(account) {
		t.Errorf("own profile %+v %v", p, err)
	}
	if err := book.SetPicture(ctx, []byte("GIF89a")); !isCode(err, bridge.CodeInvalidPicture) {
		t.Errorf("a GIF: %v, want invalid_picture", err)
	}
	if err := book.SetPicture(ctx, nil); err != nil || phone.Picture() != "" {
		t.Errorf("removing the picture: %v, picture %q", err, phone.Picture())
	}
	settings, err := book.PrivacySettings(ctx)
	if err != nil || settings["groupadd"] != "all" || settings["last"] != "all" {
		t.Errorf("privacy settings %v %v", settings, err)
	}
}
