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
