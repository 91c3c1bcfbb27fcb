"""Simulated kubelets (kwok's idea): nodes that register, heartbeat and run their pods' lifecycle through the
API only, with no container behind them. Run by the controller manager as the node-simulator."""
