package process

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/msgbridge/msgbridge/bridge/cloudapi"
	"github.com/msgbridge/msgbridge/bridge/wasim"
)

// chatwootReceiver is Chatwoot's Cloud channel webhook endpoint as its
// source has it (Webhooks::WhatsappController with MetaTokenVerifyConcern,
// WhatsappEventsJob's channel lookup): GET answers hub.challenge when
// hub.verify_token is the channel's; POST finds the channel by
// "+"+metadata.display_phone_number and checks metadata.phone_number_id.
type chatwootReceiver struct {
	verifyToken, phone, phoneID string
	bodies                      chan []byte
}

func (c *chatwootReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet {
		if r.URL.Query().Get("hub.verify_token") != c.verifyToken {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		_, _ = w.Write([]byte(r.URL.Query().Get("hub.challenge")))
		return
	}
	var body bytes.Buffer
	_, _ = body.ReadFrom(r.Body)
	var p struct {
		Object string `json:"object"`
		Entry  []struct {
			Changes []struct {
				Value struct {
					Metadata struct {
						DisplayPhoneNumber string `json:"display_phone_number"`
						PhoneNumberID      string `json:"phone_number_id"`
					} `json:"metadata"`
				} `json:"value"`
			} `json:"changes"`
		} `json:"entry"`
	}
	if json.Unmarshal(body.Bytes(), &p) != nil || p.Object != "whatsapp_business_account" || len(p.Entry) == 0 ||
		"+"+p.Entry[0].Changes[0].Value.Metadata.DisplayPhoneNumber != c.phone || p.Entry[0].Changes[0].Value.Metadata.PhoneNumberID != c.phoneID {
		w.WriteHeader(http.StatusNotFound) // no channel: Chatwoot drops it
		return
	}
	c.bodies <- body.Bytes()
}

// Chatwoot's request sequence for its Cloud channel, from
// app/services/whatsapp/providers/whatsapp_cloud_service.rb, replayed
// against the bridge with WHATSAPP_CLOUD_BASE_URL pointing at it: the
// provider check and template sync (v14.0, access_token in the query), a
// text with "context": null and an attachment by link (v13.0, bearer),
// a template send with language policy, the webhook verification and an
// incoming photo fetched the way Chatwoot fetches media.
func TestChatwootCloudSequence(t *testing.T) {
	sim := wasim.Start(t)
	hooks := newHookReceiver(t)
	files := mediaHost(t)
	p := linkedBridge(t, sim, t.TempDir(), append(hooks.env(), "CLOUD_MEDIA_HOSTS="+strings.TrimPrefix(files.URL, "http://"))...)
	contact := sim.Contact(alice, "Alice")
	waba := cloudapi.WABAID(testAccount)
	templates := "/v14.0/" + waba + "/message_templates"
	cloudJSON(t, p, http.MethodPost, templates, map[string]any{"name": "csat_survey", "language": "pt_BR", "category": "UTILITY",
		"components": []map[string]any{{"type": "BODY", "text": "Olá {{1}}, como foi?"}}}, nil)
	// validate_provider_config? and sync_templates: the token in the query.
	var synced struct {
		Data []struct {
			Name, Status string
		} `json:"data"`
		Paging map[string]any `json:"paging"`
	}
	code, raw := cloudCall(t, p, http.MethodGet, templates+"?access_token="+testAPIKey, "", nil, "")
	if code != http.StatusOK || json.Unmarshal(raw, &synced) != nil || len(synced.Data) != 1 || synced.Data[0].Status != "APPROVED" || synced.Paging["next"] != nil {
		t.Fatalf("template sync: %d %s", code, raw)
	}
	if code, raw := cloudCall(t, p, http.MethodGet, templates+"?access_token=wrong-key-0123456789", "", nil, ""); code != http.StatusUnauthorized {
		t.Errorf("a wrong access_token: %d %s", code, raw)
	}
	var numbers struct{ Data []struct{ ID string } }
	cloudJSON(t, p, http.MethodGet, "/v14.0/"+waba+"/phone_numbers", nil, &numbers)
	if len(numbers.Data) != 1 || numbers.Data[0].ID != testAccount {
		t.Errorf("phone numbers %+v", numbers)
	}
	messages := "/v13.0/" + testAccount + "/messages"
	for _, body := range []string{
		`{"messaging_product":"whatsapp","context":null,"to":"` + alice + `","text":{"body":"Olá!"},"type":"text"}`,
		`{"messaging_product":"whatsapp","context":null,"to":"` + alice + `","type":"document","document":{"link":"` + files.URL + `/files/report.pdf","caption":"segue","filename":"r.pdf"}}`,
		`{"messaging_product":"whatsapp","recipient_type":"individual","to":"` + alice + `","type":"template","template":{"name":"csat_survey",` +
			`"language":{"policy":"deterministic","code":"pt_BR"},"components":[{"type":"body","parameters":[{"type":"text","text":"Ana"}]}]}}`,
	} {
		var sent cloudSent
		code, raw := cloudCall(t, p, http.MethodPost, messages, "application/json", []byte(body), testAPIKey)
		if code != http.StatusOK || json.Unmarshal(raw, &sent) != nil || len(sent.Messages) != 1 {
			t.Fatalf("%s: %d %s", body, code, raw)
		}
		receive(t, contact, sent.Messages[0].ID)
	}
	var del struct{ Success bool }
	cloudJSON(t, p, http.MethodDelete, templates+"?name=csat_survey", nil, &del)
	chatwootWebhooks(t, p, sim, hooks)
}

// chatwootWebhooks: the bridge verifies Chatwoot's endpoint as Meta does,
// Chatwoot takes the Cloud webhook of an incoming photo, and fetches the
// photo by its id as its media_url does.
func chatwootWebhooks(t *testing.T, p *bridgeProcess, sim *wasim.Simulator, hooks *hookReceiver) {
	t.Helper()
	cw := &chatwootReceiver{verifyToken: "cw-verify", phone: "+" + testAccount, phoneID: testAccount, bodies: make(chan []byte, 1)}
	srv := httptest.NewServer(cw)
	defer srv.Close()
	url := srv.URL + "/webhooks/whatsapp/+" + testAccount
	if err := cloudapi.Handshake(context.Background(), srv.Client(), url, "cw-verify"); err != nil {
		t.Fatalf("verification: %v", err)
	}
	if err := cloudapi.Handshake(context.Background(), srv.Client(), url, "other"); err == nil {
		t.Error("a wrong verify token passed")
	}
	photo := sendMediaAndWait(t, sim, hooks, wasim.Attachment{Kind: "image", Data: cloudPNG, MimeType: "image/png", Caption: "foto"})
	body := encodeCloud(t, photo)
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	var got struct {
		Entry []struct {
			Changes []struct {
				Value struct {
					Messages []struct {
						Image struct{ ID string } `json:"image"`
					} `json:"messages"`
				} `json:"value"`
			} `json:"changes"`
		} `json:"entry"`
	}
	select {
	case b := <-cw.bodies:
		_ = json.Unmarshal(b, &got)
	default:
		t.Fatalf("Chatwoot found no channel for %s (%d)", body, resp.StatusCode)
	}
	// media_url: GET {base}/v13.0/{media_id}?phone_number_id=, then the url with the bearer token.
	id := got.Entry[0].Changes[0].Value.Messages[0].Image.ID
	if data := cloudFetch(t, p, "v13.0", id); !bytes.Equal(data, cloudPNG) {
		t.Errorf("Chatwoot's media download: %q", data)
	}
}
