{{/*
Values the chart refuses, one clear line each (`helm template` and `helm install` stop there).
The namespace, the ServiceAccount and the state ConfigMap and Lease names are written into the
admission policies and RBAC of deploy/base, which the chart renders as they are.
*/}}
{{- define "kai-chatops.validate" -}}
{{- if ne .Release.Namespace "kai-chatops" -}}
{{- fail (printf "the release's namespace is %q: install into kai-chatops (helm install ... -n kai-chatops); the admission policies and RBAC name system:serviceaccount:kai-chatops:kai-chatops" .Release.Namespace) -}}
{{- end -}}
{{- $state := .Values.config.state | default dict -}}
{{- $lease := .Values.config.lease | default dict -}}
{{- range $key, $want := dict "state.configmap" (list ($state.configmap | default "kai-chatops-state") "kai-chatops-state") "state.namespace" (list ($state.namespace | default "kai-chatops") "kai-chatops") "lease.name" (list ($lease.name | default "kai-chatops-alerts") "kai-chatops-alerts") "lease.namespace" (list ($lease.namespace | default "kai-chatops") "kai-chatops") -}}
{{- if ne (index $want 0) (index $want 1) -}}
{{- fail (printf "config.%s: %q, expected %q (the admission policy kai-chatops-own-state lets the bot write only that)" $key (index $want 0) (index $want 1)) -}}
{{- end -}}
{{- end -}}
{{- if and .Values.impersonation.enabled .Values.impersonation.legacy -}}
{{- if or (empty .Values.impersonation.users) (empty .Values.impersonation.groups) -}}
{{- fail "impersonation.users and impersonation.groups: legacy impersonation needs both listed (with none, the grant names everyone, system:masters too)" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/*
The namespaces the bot changes things in as a person (RoleBindings of kai-chatops-impersonate-on):
keda.namespaces, then flux-system and argocd when their GitOps tool is on. A JSON array.
*/}}
{{- define "kai-chatops.impersonateOnNamespaces" -}}
{{- $namespaces := list -}}
{{- range (.Values.config.keda | default dict).namespaces -}}
{{- $namespaces = append $namespaces . -}}
{{- end -}}
{{- if .Values.gitops.flux -}}
{{- $namespaces = append $namespaces "flux-system" -}}
{{- end -}}
{{- if .Values.gitops.argocd -}}
{{- $namespaces = append $namespaces "argocd" -}}
{{- end -}}
{{- $namespaces | uniq | toJson -}}
{{- end -}}

{{/* The labels deploy/base's kustomization.yaml puts on every object. */}}
{{- define "kai-chatops.labels" -}}
app.kubernetes.io/name: kai-chatops
app.kubernetes.io/part-of: kai-chatops
{{- end -}}
