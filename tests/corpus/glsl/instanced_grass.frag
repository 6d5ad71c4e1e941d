#version 450
in vec2 v_blade;
flat in int v_instance;
layout(location = 0) out vec4 color;
void main() {
    float tint = float(v_instance % 7) / 7.0;
    color = vec4(0.1 + 0.1 * tint, 0.4 + 0.5 * v_blade.x, 0.1, 1.0);
}
