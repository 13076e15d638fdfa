{{- define "pvai.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "pvai.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "pvai.labels" -}}
{{ include "pvai.selectorLabels" . }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{/* The Secret holding PVAI_ADMIN_TOKEN, DATABASE_URL and QDRANT_API_KEY: the operator's or the chart's. */}}
{{- define "pvai.secretName" -}}
{{- default (include "pvai.fullname" .) .Values.existingSecret -}}
{{- end -}}

{{/* Several replicas on one embedded SQLite file cannot work: a database is required. */}}
{{- define "pvai.checkDatabase" -}}
{{- if not (or .Values.postgresql.enabled .Values.existingSecret .Values.secrets.databaseUrl) -}}
{{- fail "pvai needs PostgreSQL: set secrets.databaseUrl, existingSecret (with DATABASE_URL) or postgresql.enabled=true" -}}
{{- end -}}
{{- end -}}

{{/*
The pod's kill deadline after SIGTERM: the preStop sleep, pvai's grace for requests in flight (shutdownGraceMs,
rounded up), 1 s for the answers of requests ended then, and 1 s for the last writes and the exit.
*/}}
{{- define "pvai.terminationGracePeriodSeconds" -}}
{{- $graceSeconds := div (add .Values.config.shutdownGraceMs 999) 1000 -}}
{{- add .Values.lifecycle.preStopSleepSeconds $graceSeconds 2 -}}
{{- end -}}
