"""What science-on-schema.org, Google's Dataset guidance and F-UJI ask of a Dataset."""
