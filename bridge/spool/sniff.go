package spool

import (
	"bytes"
	"encoding/binary"
	"mime"
	"net/http"
	"path/filepath"
	"strings"
)

// The media types WhatsApp plays, as the sniffer names them.
const (
	MimeOpus = "audio/ogg; codecs=opus"
	mimeMP4  = "video/mp4"
	mime3GP  = "video/3gpp"
	mimeM4A  = "audio/mp4"
	mimeMP3  = "audio/mpeg"
	mimeAAC  = "audio/aac"
	mimeAMR  = "audio/amr"
)

// SniffType names a file by its content. The name's extension only refines
// what the content cannot tell ("zip", "text", "bytes": a .docx is a zip, a
// .csv is text), and never into an image, video or audio type: a text file
// named .jpg stays text, so a type check on the result is a check of the
// content.
func SniffType(head []byte, name string) string {
	if media := sniffMedia(head); media != "" {
		return media
	}
	sniffed := http.DetectContentType(head)
	switch sniffed {
	case "application/octet-stream", "application/zip", "text/plain; charset=utf-8":
		byExt := mime.TypeByExtension(strings.ToLower(filepath.Ext(name)))
		if byExt != "" && !IsMediaFamily(byExt) {
			return byExt
		}
	}
	return sniffed
}

func IsMediaFamily(mimeType string) bool {
	return strings.HasPrefix(mimeType, "image/") || strings.HasPrefix(mimeType, "video/") || strings.HasPrefix(mimeType, "audio/")
}

// sniffMedia recognises the video and audio containers WhatsApp sends,
// which http.DetectContentType does not tell apart (an .m4a is "video/mp4"
// to it, an Ogg file of any codec "application/ogg"); "" for anything else.
func sniffMedia(head []byte) string {
	switch {
	case bytes.HasPrefix(head, []byte("OggS")) && bytes.Contains(head, []byte("OpusHead")):
		return MimeOpus
	case bytes.HasPrefix(head, []byte("#!AMR\n")):
		return mimeAMR
	case bytes.HasPrefix(head, []byte("ID3")):
		return mimeMP3
	case len(head) >= 12 && string(head[4:8]) == "ftyp":
		return isoBrand(head)
	case len(head) >= 4 && head[0] == 0xFF && head[1]&0xF6 == 0xF0:
		return mimeAAC // ADTS: sync word, layer 0
	case len(head) >= 4 && mpegFrame(head):
		return mimeMP3
	}
	return ""
}

// isoBrand names an ISO base media file (MP4 family) by its major brand.
func isoBrand(head []byte) string {
	size := binary.BigEndian.Uint32(head[:4])
	if size < 16 || size > 256 {
		return ""
	}
	switch brand := string(head[8:12]); {
	case brand == "M4A " || brand == "M4B ":
		return mimeM4A
	case strings.HasPrefix(brand, "3g"):
		return mime3GP
	case brand == "isom" || brand == "iso2" || strings.HasPrefix(brand, "mp4") || brand == "avc1" || brand == "M4V " || brand == "dash":
		return mimeMP4
	}
	return ""
}

// mpegFrame reports an MPEG audio frame header: 11 sync bits, a version and
// layer that exist, a bitrate that is not "bad" and a known sample rate.
func mpegFrame(h []byte) bool {
	version, layer := (h[1]>>3)&3, (h[1]>>1)&3
	bitrate, rate := h[2]>>4, (h[2]>>2)&3
	return h[0] == 0xFF && h[1]&0xE0 == 0xE0 && version != 1 && layer != 0 && bitrate != 15 && bitrate != 0 && rate != 3
}

func IsImage(mimeType string) bool {
	switch mimeType {
	case "image/jpeg", "image/png", "image/webp":
		return true
	}
	return false
}

func IsVideo(mimeType string) bool { return mimeType == mimeMP4 || mimeType == mime3GP }

func IsAudio(mimeType string) bool {
	switch mimeType {
	case MimeOpus, mimeM4A, mimeMP3, mimeAAC, mimeAMR:
		return true
	}
	return false
}
