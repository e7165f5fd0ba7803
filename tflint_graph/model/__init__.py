"""The per-module semantic model rules ask: context, scopes, names, positions, walks, values,
tensors, AutoGraph."""
