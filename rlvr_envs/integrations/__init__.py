"""Integrations with external trainers and servers: TRL, verl, HTTP, Ray."""
