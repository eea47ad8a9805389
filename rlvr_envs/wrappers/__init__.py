"""Gymnasium wrappers: curricula, difficulty filters, thinking modes."""
