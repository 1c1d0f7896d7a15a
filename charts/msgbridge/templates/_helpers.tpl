{{/* fullname names every object of the release. */}}
{{- define "msgbridge.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{/*
selectorLabels select the operator pods. They must never change: a
Deployment's selector is immutable. The component "operator" keeps them
apart from the bridges' own app.kubernetes.io/name=msgbridge pods.
*/}}
{{- define "msgbridge.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: operator
{{- end -}}

{{- define "msgbridge.labels" -}}
{{ include "msgbridge.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end -}}

{{- define "msgbridge.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "msgbridge.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- required "serviceAccount.name is required when serviceAccount.create is false" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/*
image is the manager's image. The operator passes the same image to bridges
(BRIDGE_IMAGE): one image ships both /manager and /bridge.
*/}}
{{- define "msgbridge.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}

{{/*
bridgeSelectorLabels select every bridge pod the operator runs, whatever its
MessagingBridge (controllers/specs.Labels).
*/}}
{{- define "msgbridge.bridgeSelectorLabels" -}}
app.kubernetes.io/name: msgbridge
app.kubernetes.io/component: bridge
{{- end -}}
