"""Hidden reference solutions, one module per problem set: never shipped to students."""
