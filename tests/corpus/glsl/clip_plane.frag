#version 450
in vec3 v_pos;
layout(location = 0) out vec4 color;
void main() {
    if (fract(v_pos.x * 10.0) < 0.1) discard;
    color = vec4(v_pos * 0.5 + 0.5, 1.0);
}
