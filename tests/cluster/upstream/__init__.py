"""The upstream tier: the real KAI Scheduler, KEDA and Flux controllers, built from their Go
modules at the releases users run, against a control plane of their own (tests/cluster/README.md,
"The upstream tier"). `cluster.Upstream` starts and stops the set; kai.py, keda.py and flux.py
say what each project needs; pki.py makes their certificates.
"""
