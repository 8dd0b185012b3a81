{{- define "lore.name" -}}
{{- .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "lore.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "lore.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{ include "lore.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{- define "lore.selectorLabels" -}}
app.kubernetes.io/name: {{ include "lore.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: server
{{- end -}}

{{- define "lore.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}

{{- define "lore.secretName" -}}
{{- .Values.database.existingSecret | default (printf "%s-database" (include "lore.fullname" .)) -}}
{{- end -}}

{{- define "lore.authSecretName" -}}
{{- .Values.auth.existingSecret | default (printf "%s-auth" (include "lore.fullname" .)) -}}
{{- end -}}

{{- define "lore.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- .Values.serviceAccount.name | default (include "lore.fullname" .) -}}
{{- else -}}
{{- .Values.serviceAccount.name | default "default" -}}
{{- end -}}
{{- end -}}

{{/* The server's environment, shared by the Deployment and the migration Job. */}}
{{- define "lore.env" -}}
- name: LORE_CONFIG
  value: /etc/lore/lore.toml
- name: LORE_DATABASE_URL
  valueFrom:
    secretKeyRef:
      name: {{ include "lore.secretName" . }}
      key: {{ .Values.database.existingSecretKey }}
- name: LORE_LISTEN_ADDR
  value: {{ printf "0.0.0.0:%d" (int .Values.service.port) | quote }}
{{- if .Values.console.enabled }}
- name: LORE_WEB__LISTEN
  value: {{ printf "0.0.0.0:%d" (int .Values.console.port) | quote }}
- name: LORE_WEB__SECURE_COOKIE
  value: {{ .Values.console.secureCookie | quote }}
{{- end }}
- name: LORE_DATABASE__MAX_CONNECTIONS
  value: {{ .Values.database.maxConnections | int | quote }}
- name: LORE_DATABASE__READ_URLS
  valueFrom:
    secretKeyRef:
      name: {{ include "lore.secretName" . }}
      key: {{ .Values.database.readUrlsKey }}
      optional: true
# With the migration Job, servers do not migrate themselves.
- name: LORE_DATABASE__MIGRATE_ON_START
  value: {{ not .Values.migrations.enabled | quote }}
- name: LORE_AUTH__ENABLED
  value: {{ .Values.auth.enabled | quote }}
{{- if or .Values.auth.adminToken .Values.auth.existingSecret }}
- name: LORE_AUTH__BOOTSTRAP_ADMIN_TOKEN
  valueFrom:
    secretKeyRef:
      name: {{ include "lore.authSecretName" . }}
      key: {{ .Values.auth.existingSecretKey }}
{{- end }}
- name: LORE_TELEMETRY__SERVICE_NAME
  value: {{ .Values.telemetry.serviceName | quote }}
{{- with .Values.telemetry.otlpEndpoint }}
- name: LORE_TELEMETRY__OTLP_ENDPOINT
  value: {{ . | quote }}
{{- end }}
- name: LORE_TELEMETRY__METRICS_INTERVAL_SECS
  value: {{ .Values.telemetry.metricsIntervalSecs | int | quote }}
{{- if .Values.tls.secretName }}
- name: LORE_TLS__CERT_FILE
  value: /etc/lore/tls/tls.crt
- name: LORE_TLS__KEY_FILE
  value: /etc/lore/tls/tls.key
{{- if .Values.tls.verifyClients }}
- name: LORE_TLS__CLIENT_CA_FILE
  value: /etc/lore/tls/ca.crt
{{- end }}
{{- end }}
# The image ships the embedding model under this directory (read-only).
- name: LORE_CACHE_DIR
  value: {{ .Values.image.cacheDir }}
{{- end -}}

{{- define "lore.securityContext" -}}
allowPrivilegeEscalation: false
readOnlyRootFilesystem: true
runAsNonRoot: true
runAsUser: 10001
runAsGroup: 10001
capabilities:
  drop: ["ALL"]
seccompProfile:
  type: RuntimeDefault
{{- end -}}

{{/* Mounts of the config file and a writable /tmp. */}}
{{- define "lore.volumeMounts" -}}
- name: config
  mountPath: /etc/lore
  readOnly: true
- name: tmp
  mountPath: /tmp
{{- if .Values.tls.secretName }}
- name: tls
  mountPath: /etc/lore/tls
  readOnly: true
{{- end }}
{{- end -}}

{{- define "lore.volumes" -}}
- name: config
  configMap:
    name: {{ include "lore.fullname" . }}
- name: tmp
  emptyDir:
    sizeLimit: {{ .Values.tmpVolume.sizeLimit }}
{{- if .Values.tls.secretName }}
- name: tls
  secret:
    secretName: {{ .Values.tls.secretName }}
{{- end }}
{{- end -}}

{{/*
The kubelet's gRPC probes speak plaintext only: with TLS the probes check
that the port accepts connections instead.
*/}}
{{- define "lore.probe" -}}
{{- if .Values.tls.secretName }}
tcpSocket:
  port: grpc
{{- else }}
grpc:
  port: {{ .Values.service.port }}
{{- end }}
{{- end -}}
