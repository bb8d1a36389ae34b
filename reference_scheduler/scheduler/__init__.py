"""The reference scheduler: Volcano's scheduling cycle (session, actions, plugins) in Python."""
