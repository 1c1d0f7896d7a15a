package messaging

import "testing"

func TestAttachmentDisposition(t *testing.T) {
	for in, want := range map[string]string{
		"invoice.pdf":       "attachment; filename=invoice.pdf",
		"my invoice.pdf":    `attachment; filename="my invoice.pdf"`,
		"../../etc/passwd":  "attachment; filename=passwd",
		`C:\Users\a\b.docx`: "attachment; filename=b.docx",
		"":                  "attachment; filename=" + videoID + ".mp4",
		"..":                "attachment; filename=" + videoID + ".mp4",
		"a\r\nb.txt":        `attachment; filename*=utf-8''a%0D%0Ab.txt`,
	} {
		if got := attachmentDisposition(in, videoID, "video/mp4"); got != want {
			t.Errorf("attachmentDisposition(%q) = %q, want %q", in, got, want)
		}
	}
}

// A download without a file name gets its type's extension.
func TestAttachmentExtension(t *testing.T) {
	for mt, want := range map[string]string{
		"image/jpeg": ".jpg", "audio/ogg; codecs=opus": ".ogg", "application/pdf": ".pdf", "application/x-unknown": "", "": "",
	} {
		if got := attachmentDisposition("", "med_1", mt); got != "attachment; filename=med_1"+want {
			t.Errorf("%q: %s, want the extension %q", mt, got, want)
		}
	}
}

func TestContentType(t *testing.T) {
	for in, want := range map[string]string{
		"image/jpeg":                "image/jpeg",
		"audio/ogg; codecs=opus":    "audio/ogg; codecs=opus",
		"":                          "application/octet-stream",
		"not a type":                "application/octet-stream",
		"text/html\r\nX-Evil: 1":    "application/octet-stream",
		"application/pdf; name=\"x": "application/octet-stream",
	} {
		if got := contentType(in); got != want {
			t.Errorf("contentType(%q) = %q, want %q", in, got, want)
		}
	}
}

const videoID = "med_0123456789abcdef0123456789abcdef"
